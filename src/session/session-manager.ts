import { homedir } from "node:os";
import type { AgentDefinition } from "../agent/agent.js";
import { invalidArgument, notFound, shuttingDown } from "../common/errors.js";
import type { Logger } from "../common/logger.js";
import type { Store } from "../store/store.js";
import type { SessionInput } from "./session-input.js";
import { ExpiryScheduler } from "./expiry-scheduler.js";
import { createNotifications } from "./notifications/create-notifications.js";
import { SessionTimers } from "./timers.js";
import { type CreateSessionInput, newSession, storeNewSession } from "./new-session.js";
import { checkRequestId, REQUEST_ID_DEFAULTS, type RequestIdLimits } from "./request-ids.js";
import { RuleBook } from "./rule-book.js";
import type { ActorRegistry } from "./actor-registry.js";
import { type Applied, type ApplyLimits, applyInput } from "./apply-input.js";
import { hubStream } from "./hub-stream.js";
import type { ApplyHere } from "./inbox.js";
import type { SessionStream } from "./session-stream.js";
import { removeSession } from "./session-deletion.js";
import { actorOf, agentOf, loadActor } from "./load-actor.js";
import { type ClusterOptions, type NodeActors, nodeActors } from "./node-actors.js";
import { SessionReader, type StoredSession } from "./session-reader.js";
import type { SessionData } from "./records.js";
import { recoverReplies } from "./recovery.js";
import { checkSessionsPerTenant, type SessionLimits } from "./session-limits.js";
import type { SessionFilter, SessionPage } from "./session-list.js";
import type { MessagePage, MessagePageRequest } from "./message-list.js";
import { SessionReads } from "./session-reads.js";
import { type SessionView, sessionView } from "./session-view.js";
import type { ActorDeps, SessionActor } from "./session-actor.js";
import { TenantSessionCount } from "./tenant-session-count.js";
import type { SessionManagerOptions } from "./manager-options.js";

export type { CreateSessionInput } from "./new-session.js";
export type { SessionView } from "./session-view.js";
export type { SessionLimits } from "./session-limits.js";

/**
 * Owns the sessions of one server: creates, finds, lists and deletes them, and keeps one actor in
 * memory per session in use (a running reply, an attached stream; see `nodeActors` for several
 * nodes); other sessions live only in the store.
 *
 * When the store fails (see `Store`), every input, create, delete and attach is refused with the
 * failure (UNAVAILABLE), deadlines stop firing, running replies are aborted, attached streams end
 * with the failure, and every actor is dropped: reads then come from the store, never from memory
 * that a failed write left ahead of it.
 */
export class SessionManager {
  private readonly actors: ActorRegistry;
  private readonly node: NodeActors;
  private readonly reader: SessionReader;
  private readonly reads: SessionReads;
  /** What the actors of each tenant share, its rules included (one object per tenant). */
  private readonly tenantDeps = new Map<string, ActorDeps>();
  /** The home directory `~` stands for in permission checks. */
  readonly homeDir = homedir();
  private readonly timers: SessionTimers;
  private readonly deps: Omit<ActorDeps, "rules">;
  private readonly limits: SessionLimits;
  private readonly sessionCount: TenantSessionCount;
  private readonly requestIds: RequestIdLimits;
  private readonly applyLimits: ApplyLimits;
  /** Set by `stop`: from then on inputs, creations and deletions answer UNAVAILABLE. */
  private stopping = false;

  constructor(
    private readonly store: Store,
    private readonly agents: ReadonlyMap<string, AgentDefinition>,
    private readonly log: Logger,
    options: SessionManagerOptions = {},
  ) {
    this.limits = options.limits ?? {};
    this.requestIds = { ...REQUEST_ID_DEFAULTS, ...options.requestIds };
    this.sessionCount = new TenantSessionCount(store, options.leases !== undefined);
    this.reader = new SessionReader(store, log);
    const applyHere: ApplyHere = (...args) => this.applyHere(...args);
    const cluster: ClusterOptions | undefined = options.leases && {
      ...options.leases,
      signals: options.signals,
      reader: this.reader,
      applyHere,
    };
    const deps = (tenant: string) => this.actorDeps(tenant);
    this.node = nodeActors(store, log, cluster, {
      load: (id, lease) => loadActor(this.reader, agents, id, deps, lease),
      make: (data) => actorOf(data, undefined, agents, deps),
    });
    this.actors = this.node.actors;
    this.reads = new SessionReads(store, this.reader, this.actors);
    const expiry = new ExpiryScheduler(store, log, (sessionId, now) =>
      this.withActor(sessionId, undefined, (actor) => actor.serial(() => actor.expire(now))),
    );
    const notifications = createNotifications(store, log, options);
    this.timers = new SessionTimers(expiry, notifications?.sender, notifications?.tokens);
    this.deps = {
      store,
      logger: log,
      homeDir: this.homeDir,
      expiry,
      ...(notifications ? { outbox: notifications.outbox } : {}),
      failed: (actor) => this.actors.drop(actor),
      idle: (actor) => this.actors.release(actor),
      ...(this.node.leases
        ? { leases: this.node.leases, published: this.node.published, shown: this.node.shown }
        : {}),
      ...(this.node.epoch ? { epoch: this.node.epoch } : {}),
      keepFinishedReplies: options.keepFinishedReplies,
      ...(options.telemetry ? { telemetry: options.telemetry } : {}),
    };
    this.applyLimits = {
      store,
      requestIds: this.requestIds,
      runningReplies: this.limits.runningReplies,
      running: () => this.actors.running(),
      assertAccepting: () => this.assertAccepting(),
    };
    // A failed store: everything that would write stops, and every actor.
    store.onFailure((failure) => {
      this.timers.stop().catch(() => undefined);
      for (const actor of this.actors.all()) actor.fail(failure);
    });
  }

  /** Recovers the replies a stop cut short, then starts the timers (what fell due included). */
  async start(): Promise<void> {
    await this.node.open();
    const recovered = await this.recover();
    if (recovered > 0)
      this.log.info({ recovered }, "ended replies that were running at the last stop");
    await this.timers.start();
    // With other nodes: their deadlines and notifications too (its node may be gone when due).
    this.node.sweep(() => this.recover().then(() => this.timers.start()));
  }

  /**
   * Stops for a shutdown: from now on every input, creation and deletion answers UNAVAILABLE
   * "server shutting down"; deadlines stop firing; every running reply is interrupted after the
   * inputs already being applied to it, its running tools given `graceMs` to finish (see
   * `SessionActor.stop`); parked replies stay parked. Resolves once their writes are done, after
   * which nothing here writes to the store.
   */
  async stop(graceMs = 0): Promise<void> {
    this.stopping = true;
    await this.timers.stop();
    await this.actors.stopAll(graceMs);
    await this.node.stop(shuttingDown());
  }

  /** Refuses a change once the store has failed, or once the server is shutting down. */
  private assertAccepting(): void {
    if (this.store.failure) throw this.store.failure;
    if (this.stopping) throw shuttingDown();
  }

  private actorDeps(tenant: string): ActorDeps {
    const known = this.tenantDeps.get(tenant);
    if (known) return known;
    const deps = { ...this.deps, rules: new RuleBook(this.store, tenant, this.node.signals) };
    this.tenantDeps.set(tenant, deps);
    return deps;
  }

  /** The permission rules of a tenant. */
  rules(tenant: string): RuleBook {
    return this.actorDeps(tenant).rules;
  }

  /** The configured agent, or NOT_FOUND. */
  agent(agentId: string): AgentDefinition {
    const agent = this.agents.get(agentId);
    if (!agent) throw notFound("agent", agentId);
    return agent;
  }

  /** A session's configured agent; FAILED_PRECONDITION when it is no longer configured. */
  agentOf = (data: SessionData): AgentDefinition => agentOf(data, this.agents);

  listAgents(): AgentDefinition[] {
    return [...this.agents.values()];
  }

  /**
   * Creates a session; the tenant's sessions are counted against `sessionsPerTenant`. Unless its
   * agent shares its working directories, the session's own directories are created before its
   * record is written; when they cannot be, nothing is written.
   */
  create(tenant: string, input: CreateSessionInput): Promise<SessionView> {
    return this.sessionCount.update(tenant, async (count, guard) => {
      this.assertAccepting();
      checkSessionsPerTenant(this.limits, tenant, count);
      const known = [...this.agents.keys()];
      const stamp = this.node.epoch?.stamp();
      const data = newSession(tenant, this.agents.get(input.agentId), known, input, stamp);
      const since = Date.now();
      await storeNewSession(this.store, this.agent(data.agentId), data, count + 1, guard);
      this.rules(tenant).sessionCreated(data.id, since);
      this.node.adopt(data);
      return { count: count + 1, result: sessionView(data, undefined) };
    });
  }

  /**
   * Runs `fn` with the session's actor and lets the actor leave memory afterwards, however `fn`
   * ends, unless a stream, a running reply or another use still needs it. Every use of an actor
   * goes through here, except `attach`, whose stream holds the actor until it ends.
   */
  withActor<T>(
    sessionId: string,
    tenant: string | undefined,
    fn: (actor: SessionActor) => Promise<T>,
  ): Promise<T> {
    if (!sessionId) throw invalidArgument([{ field: "session_id", description: "is required" }]);
    return this.actors.withActor(sessionId, tenant, fn);
  }

  /** How many session actors are in memory (attached, running, in use, or not yet released). */
  get liveActors(): number {
    return this.actors.size;
  }

  /** A session for a read (see `SessionReads.peek`): its actor here, or as stored. */
  peek = (tenant: string, id: string): Promise<SessionActor | StoredSession> =>
    this.reads.peek(tenant, id);
  /** A session's view (see `SessionReads.get`). */
  get = (tenant: string, id: string): Promise<SessionView> => this.reads.get(tenant, id);
  /** Sessions newest first, optionally filtered (see `listSessions`). */
  list = (tenant: string, filter: SessionFilter): Promise<SessionPage> =>
    this.reads.list(tenant, filter);
  /** A session's messages newest first (see `SessionReads.messages`). */
  messages = (tenant: string, id: string, page: MessagePageRequest): Promise<MessagePage> =>
    this.reads.messages(tenant, id, page);

  /** Deletes a session with its history, events and reply (see `removeSession`). */
  async delete(tenant: string, sessionId: string): Promise<void> {
    this.assertAccepting();
    if (!sessionId) throw invalidArgument([{ field: "session_id", description: "is required" }]);
    const { store, actors, sessionCount } = this;
    const deps = { store, actors, sessionCount, rules: this.rules(tenant) };
    await removeSession({ ...deps, published: this.node.published }, tenant, sessionId);
  }

  /**
   * Attaches a stream after `afterSeq` (`field`: its name in the request) to the session actor's hub
   * (see `SessionActor.attach`), or on several nodes through the store (see `SessionFollowers`).
   */
  async attach(
    tenant: string,
    sessionId: string,
    afterSeq: number,
    signal: AbortSignal,
    field = "after_seq",
  ): Promise<SessionStream> {
    if (this.store.failure) throw this.store.failure;
    if (!sessionId) throw invalidArgument([{ field: "session_id", description: "is required" }]);
    const followers = this.node.followers;
    if (followers) return followers.follow(tenant, sessionId, afterSeq, signal, this.limits, field);
    const actor = await this.actors.acquire(sessionId, tenant);
    return hubStream(this.actors, actor, afterSeq, signal, this.limits, field);
  }

  /**
   * Applies one input, once. For a user message, an answer or an interrupt, resolves once it is
   * applied, with a promise of the reply's settlement (finished or parked). An input whose
   * `requestId` the session remembers is not applied again: the same input resolves as a
   * `duplicate` with `firstOutcome`, the settlement that followed it the first time; a different
   * input is refused with INVALID_ARGUMENT naming `request_id`, and nothing changes.
   */
  async apply(
    tenant: string,
    sessionId: string,
    input: SessionInput,
    options: { principal?: string; requestId?: string; trace?: string | undefined } = {},
  ): Promise<Applied> {
    this.assertAccepting();
    const requestId = options.requestId || undefined;
    if (requestId) checkRequestId(requestId);
    const principal = options.principal ?? "anonymous";
    const { trace } = options;
    const inbox = this.node.inbox;
    if (inbox) return inbox.apply(tenant, sessionId, input, principal, requestId, trace);
    return this.applyHere(tenant, sessionId, input, principal, requestId, trace);
  }

  /** Applies one input to the session's actor on this node. */
  private applyHere(
    tenant: string | undefined,
    sessionId: string,
    input: SessionInput,
    principal: string,
    requestId: string | undefined,
    trace?: string,
  ): Promise<Applied> {
    return this.withActor(sessionId, tenant, (actor) =>
      applyInput(this.applyLimits, actor, input, principal, requestId, trace),
    );
  }

  /** Ends every reply that was running when the server stopped (see `recoverReplies`). */
  recover = (): Promise<number> =>
    recoverReplies(this.store, this.log, (id, fn) => this.withActor(id, undefined, fn));
}
