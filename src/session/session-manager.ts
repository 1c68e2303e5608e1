import { homedir } from "node:os";
import type { AgentDefinition } from "../agent/agent.js";
import type { ToolCallBlock } from "../agent/types.js";
import {
  invalidArgument,
  isParkwayError,
  notFound,
  ParkwayError,
  shuttingDown,
} from "../common/errors.js";
import { limitReached } from "../common/limits.js";
import type { Logger } from "../common/logger.js";
import { RecordError } from "../store/record.js";
import { StorageFailure } from "../store/storage-failure.js";
import type { Store } from "../store/store.js";
import {
  DamagedSessionRecord,
  EventRecord,
  eventKey,
  MessageRecord,
  messageKey,
  type ReplyData,
  ReplyRecord,
  RunningRecord,
  TenantCountRecord,
  TenantSessionRecord,
  tenantSessionKey,
  type SessionData,
  SessionRecord,
  type SessionStatus,
} from "./records.js";
import { externalTool } from "../tools/external-tool.js";
import type { SessionInput } from "./session-input.js";
import { ExpiryScheduler } from "./expiry-scheduler.js";
import {
  type CreateSessionInput,
  makeSessionDirectories,
  newSession,
  removeSessionDirectories,
} from "./new-session.js";
import { pendingCalls } from "./pending-calls.js";
import {
  checkRequestId,
  deleteRequests,
  lookupRequest,
  REQUEST_ID_DEFAULTS,
  type RequestIdLimits,
} from "./request-ids.js";
import { RuleBook } from "./rule-book.js";
import { sessionDataLoss, sessionProblem } from "./session-consistency.js";
import { type ActorDeps, type ReplySettled, SessionActor } from "./session-actor.js";
import type { StreamItem } from "./stored-event.js";
import type { Subscriber } from "./subscriber.js";
import { TenantSessionCount } from "./tenant-session-count.js";

export type { CreateSessionInput } from "./new-session.js";

/** A session as the API shows it. */
export interface SessionView extends SessionData {
  pendingToolCalls: ToolCallBlock[];
}

/** Limits the sessions enforce; each is RESOURCE_EXHAUSTED naming it when reached. */
export interface SessionLimits {
  sessionsPerTenant?: number;
  runningReplies?: number;
  streamsPerSession?: number;
  /** Unread events one attached stream may fall behind before it ends with RESOURCE_EXHAUSTED. */
  streamBacklogEvents?: number;
}

export type { SessionInput } from "./session-input.js";

/**
 * Owns the sessions of one server: creates, finds, lists and deletes them, and keeps one actor in
 * memory per session that is in use (a running reply or an attached stream); other sessions live
 * only in the store.
 *
 * When the store fails (see `Store`), every input, create, delete and attach is refused with the
 * failure (UNAVAILABLE), deadlines stop firing, running replies are aborted, attached streams end
 * with the failure, and every actor is dropped: reads then come from the store, never from memory
 * that a failed write left ahead of it.
 */
export class SessionManager {
  private readonly actors = new Map<string, SessionActor>();
  /** Actors dropped after a failed write, until their reply has stopped. */
  private readonly dropped = new Set<SessionActor>();
  private readonly loading = new Map<string, Promise<SessionActor>>();
  /** How many scoped uses (`withActor`) each actor in memory has under way. */
  private readonly uses = new Map<SessionActor, number>();
  private readonly ruleBooks = new Map<string, RuleBook>();
  /** The home directory `~` stands for in permission checks. */
  readonly homeDir = homedir();
  private readonly expiry: ExpiryScheduler;
  private readonly deps: Omit<ActorDeps, "rules">;
  private readonly limits: SessionLimits;
  private readonly sessionCount: TenantSessionCount;
  private readonly requestIds: RequestIdLimits;
  /** Set by `stop`: from then on inputs, creations and deletions answer UNAVAILABLE. */
  private stopping = false;
  /** Sessions whose data loss has been logged (once each). */
  private readonly lossLogged = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly agents: ReadonlyMap<string, AgentDefinition>,
    private readonly log: Logger,
    options: {
      keepFinishedReplies?: number;
      limits?: SessionLimits;
      /** How many request ids each session remembers, and for how long. */
      requestIds?: Partial<RequestIdLimits>;
    } = {},
  ) {
    this.limits = options.limits ?? {};
    this.requestIds = { ...REQUEST_ID_DEFAULTS, ...options.requestIds };
    this.sessionCount = new TenantSessionCount(store);
    this.expiry = new ExpiryScheduler(store, log, (sessionId, now) =>
      this.withActor(sessionId, undefined, (actor) => actor.serial(() => actor.expire(now))),
    );
    this.deps = {
      store,
      logger: log,
      homeDir: this.homeDir,
      expiry: this.expiry,
      failed: (actor) => this.drop(actor),
      idle: (actor) => this.release(actor),
      ...(options.keepFinishedReplies === undefined
        ? {}
        : { keepFinishedReplies: options.keepFinishedReplies }),
    };
    store.onFailure((failure) => this.storageFailed(failure));
  }

  /** Stops everything that would write, and every actor (see the class). */
  private storageFailed(failure: StorageFailure): void {
    this.expiry.stop().catch(() => undefined);
    for (const actor of [...this.actors.values()]) actor.fail(failure);
  }

  /** Forgets an actor whose write failed; `stop` still waits for its reply to end. */
  private drop(actor: SessionActor): void {
    if (this.actors.get(actor.id) === actor) this.actors.delete(actor.id);
    this.dropped.add(actor);
    void actor.stop().finally(() => this.dropped.delete(actor));
  }

  /** Refuses a change once the store has failed: it could not be stored. */
  private refuseIfFailed(): void {
    const failure = this.store.failure;
    if (failure) throw failure;
  }

  /**
   * Recovers the replies a stop cut short, then starts firing deadlines (including those that
   * passed while the server was down).
   */
  async start(): Promise<void> {
    const recovered = await this.recover();
    if (recovered > 0)
      this.log.info({ recovered }, "ended replies that were running at the last stop");
    await this.expiry.start();
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
    await this.expiry.stop();
    await Promise.allSettled([...this.loading.values()]);
    await Promise.all([
      ...[...this.actors.values()].map((actor) => actor.serial(() => actor.stop(graceMs))),
      ...[...this.dropped].map((actor) => actor.stop()),
    ]);
  }

  /** Refuses a change once the store has failed, or once the server is shutting down. */
  private assertAccepting(): void {
    this.refuseIfFailed();
    if (this.stopping) throw shuttingDown();
  }

  /** The permission rules of a tenant. */
  rules(tenant: string): RuleBook {
    let book = this.ruleBooks.get(tenant);
    if (!book) {
      book = new RuleBook(this.store, tenant);
      this.ruleBooks.set(tenant, book);
    }
    return book;
  }

  /** The configured agent, or NOT_FOUND. */
  agent(agentId: string): AgentDefinition {
    const agent = this.agents.get(agentId);
    if (!agent) throw notFound("agent", agentId);
    return agent;
  }

  listAgents(): AgentDefinition[] {
    return [...this.agents.values()];
  }

  /**
   * Creates a session; the tenant's sessions are counted against `sessionsPerTenant`. Unless its
   * agent shares its working directories, the session's own directories are created before its
   * record is written; when they cannot be, nothing is written.
   */
  create(tenant: string, input: CreateSessionInput): Promise<SessionView> {
    return this.sessionCount.update(tenant, async (count) => {
      this.assertAccepting();
      const max = this.limits.sessionsPerTenant;
      if (max !== undefined && count >= max) {
        throw limitReached(
          "sessionsPerTenant",
          max,
          `tenant ${tenant} has ${max} sessions; delete some`,
        );
      }
      const known = [...this.agents.keys()];
      const data = newSession(tenant, this.agents.get(input.agentId), known, input);
      const agent = this.agent(data.agentId);
      await makeSessionDirectories(agent, data);
      try {
        await this.store
          .batch()
          .put(SessionRecord, data.id, data)
          .put(TenantSessionRecord, tenantSessionKey(tenant, data.id), { sessionId: data.id })
          .put(TenantCountRecord, tenant, { sessions: count + 1 })
          .write({ sync: true });
      } catch (err) {
        await removeSessionDirectories(agent, data);
        throw err;
      }
      return { count: count + 1, result: { ...data, pendingToolCalls: [] } };
    });
  }

  /**
   * The session's actor, loaded from the store when not in memory, with one use held for the caller
   * (see `withActor`, which gives it back). NOT_FOUND when there is no such session, or it belongs
   * to another tenant (undefined `tenant`: any, for the server's own work).
   */
  private async acquire(sessionId: string, tenant?: string): Promise<SessionActor> {
    if (!sessionId) throw invalidArgument([{ field: "session_id", description: "is required" }]);
    for (;;) {
      const actor = await this.load(sessionId);
      // Released while this caller waited: load again, never use an actor no longer in memory.
      if (this.actors.get(sessionId) !== actor) continue;
      if (tenant !== undefined && actor.tenant !== tenant) {
        this.release(actor);
        throw notFound("session", sessionId);
      }
      this.uses.set(actor, (this.uses.get(actor) ?? 0) + 1);
      return actor;
    }
  }

  /** Gives back a use taken by `acquire`, and drops the actor from memory if nothing needs it. */
  private giveBack(actor: SessionActor): void {
    const left = (this.uses.get(actor) ?? 1) - 1;
    if (left > 0) this.uses.set(actor, left);
    else this.uses.delete(actor);
    this.release(actor);
  }

  /**
   * Runs `fn` with the session's actor and lets the actor leave memory afterwards, however `fn`
   * ends, unless a stream, a running reply or another use still needs it. Every use of an actor
   * goes through here, except `attach`, whose stream holds the actor until it ends.
   */
  async withActor<T>(
    sessionId: string,
    tenant: string | undefined,
    fn: (actor: SessionActor) => Promise<T>,
  ): Promise<T> {
    const actor = await this.acquire(sessionId, tenant);
    try {
      return await fn(actor);
    } finally {
      this.giveBack(actor);
    }
  }

  /** How many session actors are in memory (attached, running, in use, or not yet released). */
  get liveActors(): number {
    return this.actors.size;
  }

  private async load(sessionId: string): Promise<SessionActor> {
    const cached = this.actors.get(sessionId);
    if (cached) return cached;
    let loading = this.loading.get(sessionId);
    if (!loading) {
      loading = (async () => {
        const { data, reply } = await this.read(sessionId);
        const agent = this.agents.get(data.agentId);
        if (!agent) {
          throw new ParkwayError(
            "failed_precondition",
            `session ${sessionId} belongs to agent ${data.agentId}, which is no longer configured`,
          );
        }
        const sessionTools = data.externalTools.map((spec) =>
          externalTool({
            name: spec.name,
            description: spec.description,
            inputSchema: JSON.parse(spec.inputSchema) as Record<string, unknown>,
            ...(spec.metadataSchema
              ? { metadataSchema: JSON.parse(spec.metadataSchema) as Record<string, unknown> }
              : {}),
          }),
        );
        const actor = new SessionActor(
          data,
          agent,
          { ...this.deps, rules: this.rules(data.tenant) },
          sessionTools,
        );
        actor.restore(reply);
        this.actors.set(sessionId, actor);
        return actor;
      })().finally(() => this.loading.delete(sessionId));
      this.loading.set(sessionId, loading);
    }
    return loading;
  }

  /**
   * A session's records from the store: NOT_FOUND when it does not exist (or, with `tenant`,
   * belongs to another tenant); DATA_LOSS naming what disagrees when they cannot be read or
   * disagree (see `sessionProblem`), logged once per session.
   */
  private async read(
    sessionId: string,
    tenant?: string,
  ): Promise<{ data: SessionData; reply: ReplyData | undefined }> {
    let data: SessionData | undefined;
    let reply: ReplyData | undefined;
    let problem: string | undefined;
    try {
      data = await this.store.get(SessionRecord, sessionId);
      if (!data || (tenant !== undefined && data.tenant !== tenant)) {
        throw notFound("session", sessionId);
      }
      reply = await this.store.get(ReplyRecord, sessionId);
      problem = await sessionProblem(this.store, data, reply);
    } catch (err) {
      // A record that cannot be read (not one from a newer version), or a block LevelDB finds
      // corrupt, is a loss.
      const corrupt =
        (err instanceof RecordError && /is (corrupt|invalid)/.test(err.message)) ||
        (err as { code?: unknown }).code === "LEVEL_CORRUPTION";
      if (!corrupt) throw err;
      problem = err instanceof RecordError ? err.message : "LevelDB reports a corrupt block";
    }
    if (problem === undefined && data) return { data, reply };
    const loss = sessionDataLoss(sessionId, problem ?? "its records cannot be read");
    if (!this.lossLogged.has(sessionId)) {
      this.lossLogged.add(sessionId);
      this.log.error({ session: sessionId, problem }, "session has lost data");
    }
    throw loss;
  }

  /** Drops an actor from memory when nothing uses it: no stream, no running reply, no scoped use. */
  release(actor: SessionActor): void {
    if (actor.evictable && !this.uses.has(actor) && this.actors.get(actor.id) === actor) {
      this.actors.delete(actor.id);
    }
  }

  async get(tenant: string, sessionId: string): Promise<SessionView> {
    if (!sessionId) throw invalidArgument([{ field: "session_id", description: "is required" }]);
    const actor = this.actors.get(sessionId);
    if (actor?.tenant === tenant)
      return { ...actor.snapshot, pendingToolCalls: actor.pendingCalls };
    const { data, reply } = await this.read(sessionId, tenant);
    const pending = pendingCalls(reply?.message);
    return { ...data, pendingToolCalls: pending };
  }

  /** Sessions newest first, optionally filtered; `pageToken` is the last id of the previous page. */
  async list(
    tenant: string,
    filter: {
      status?: SessionStatus;
      agentId?: string;
      pageSize: number;
      pageToken?: string;
    },
  ): Promise<{ sessions: SessionView[]; nextPageToken?: string }> {
    const sessions: SessionView[] = [];
    let last: string | undefined;
    for await (const [, { sessionId: id }] of this.store.entries(TenantSessionRecord, {
      reverse: true,
      gte: tenantSessionKey(tenant, ""),
      lt: filter.pageToken ? tenantSessionKey(tenant, filter.pageToken) : `${tenant}/\uffff`,
    })) {
      const view = await this.get(tenant, id).catch(() => undefined);
      if (!view) continue;
      if (filter.status && view.status !== filter.status) continue;
      if (filter.agentId && view.agentId !== filter.agentId) continue;
      if (sessions.length === filter.pageSize) return { sessions, nextPageToken: last };
      sessions.push(view);
      last = id;
    }
    return { sessions };
  }

  /** Deletes a session with its history, events and reply; interrupts a running reply. */
  async delete(tenant: string, sessionId: string): Promise<void> {
    this.assertAccepting();
    // A session that lost data can still be deleted.
    const actor = await this.acquire(sessionId, tenant).catch(async (err: unknown) => {
      if (!isParkwayError(err, "data_loss")) throw err;
      const data = await this.store.get(SessionRecord, sessionId).catch(() => undefined);
      if (data && data.tenant !== tenant) throw notFound("session", sessionId);
      return undefined;
    });
    await actor?.dispose(notFound("session", sessionId));
    if (actor) this.uses.delete(actor);
    this.actors.delete(sessionId);
    const batch = this.store.batch();
    for await (const key of this.store.keys(EventRecord, {
      gte: eventKey(sessionId, 0),
      lt: `${sessionId}0`,
    })) {
      batch.del(EventRecord, key);
    }
    for await (const key of this.store.keys(MessageRecord, {
      gte: messageKey(sessionId, 0),
      lt: `${sessionId}0`,
    })) {
      batch.del(MessageRecord, key);
    }
    await this.rules(tenant).deleteSessionRules(batch, sessionId);
    await deleteRequests(this.store, batch, sessionId);
    batch
      .del(DamagedSessionRecord, sessionId)
      .del(ReplyRecord, sessionId)
      .del(SessionRecord, sessionId)
      .del(TenantSessionRecord, tenantSessionKey(tenant, sessionId));
    await this.sessionCount.update(tenant, async (count) => {
      const next = Math.max(0, count - 1);
      await batch.put(TenantCountRecord, tenant, { sessions: next }).write({ sync: true });
      return { count: next, result: undefined };
    });
  }

  /** Attaches a stream to a session (see `SessionActor.attach`). */
  async attach(
    tenant: string,
    sessionId: string,
    afterSeq: number,
    signal: AbortSignal,
  ): Promise<{
    actor: SessionActor;
    lastSeq: number;
    items: AsyncGenerator<StreamItem[]>;
    subscriber: Subscriber;
  }> {
    this.refuseIfFailed();
    const actor = await this.acquire(sessionId, tenant);
    try {
      // Attached, the stream holds the actor until it ends (then `release`); refused, the actor
      // may leave memory at once.
      return this.attachTo(actor, afterSeq, signal);
    } finally {
      this.giveBack(actor);
    }
  }

  private attachTo(
    actor: SessionActor,
    afterSeq: number,
    signal: AbortSignal,
  ): ReturnType<SessionActor["attach"]> & { actor: SessionActor } {
    const sessionId = actor.id;
    const lastSeq = actor.snapshot.lastSeq;
    if (afterSeq + 1 < actor.firstAvailableSeq) {
      throw new ParkwayError(
        "failed_precondition",
        `events up to seq ${actor.firstAvailableSeq - 1} of session ${sessionId} were compacted (their replies are kept as final messages); attach with after_seq ≥ ${actor.firstAvailableSeq - 1}`,
        {
          reason: "EVENTS_COMPACTED",
          metadata: { first_available_seq: String(actor.firstAvailableSeq) },
          preconditionViolations: [
            {
              type: "EVENT_RETENTION",
              subject: sessionId,
              description: `the first event still stored is seq ${actor.firstAvailableSeq}`,
            },
          ],
        },
      );
    }
    if (afterSeq > lastSeq) {
      throw invalidArgument([
        {
          field: "attach.after_seq",
          description: `is ${afterSeq}, beyond the session's last seq ${lastSeq}`,
        },
      ]);
    }
    const maxStreams = this.limits.streamsPerSession;
    if (maxStreams !== undefined && actor.events.attached >= maxStreams) {
      throw limitReached(
        "streamsPerSession",
        maxStreams,
        `session ${sessionId} has ${maxStreams} streams attached`,
      );
    }
    const attached = actor.attach(afterSeq, signal, this.limits.streamBacklogEvents);
    return { actor, ...attached };
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
    options: { principal?: string; requestId?: string } = {},
  ): Promise<{
    replyId?: string;
    settled?: Promise<ReplySettled>;
    duplicate?: boolean;
    firstOutcome?: () => Promise<ReplySettled | undefined>;
  }> {
    this.assertAccepting();
    const requestId = options.requestId || undefined;
    if (requestId) checkRequestId(requestId);
    const principal = options.principal ?? "anonymous";
    return this.withActor(sessionId, tenant, (actor) =>
      this.applyTo(actor, input, principal, requestId),
    );
  }

  private applyTo(
    actor: SessionActor,
    input: SessionInput,
    principal: string,
    requestId: string | undefined,
  ): ReturnType<SessionManager["apply"]> {
    const sessionId = actor.id;
    return actor.serial(async () => {
      this.assertAccepting();
      let ticket;
      if (requestId) {
        const found = await lookupRequest(
          this.store,
          sessionId,
          requestId,
          input,
          actor.nextRequest,
          this.requestIds,
        );
        if ("duplicate" in found) {
          return {
            duplicate: true,
            firstOutcome: () => actor.firstOutcome(requestId, found.duplicate),
          };
        }
        ticket = found.ticket;
      }
      const maxRunning = this.limits.runningReplies;
      if (maxRunning !== undefined && input.kind !== "user_interrupt") {
        const running = [...this.actors.values()].filter((a) => a.running).length;
        if (running >= maxRunning) {
          throw limitReached(
            "runningReplies",
            maxRunning,
            "too many replies are running; retry later",
          );
        }
      }
      switch (input.kind) {
        case "user_message":
          return actor.startReply(input.text, ticket);
        case "user_interrupt":
          return actor.interrupt(input.replyId, principal, ticket);
        case "confirm":
          return actor.confirm(input.replyId, input.answers, principal, ticket);
        case "external_results":
          return actor.externalResults(input.replyId, input.answers, principal, ticket);
      }
    });
  }

  /**
   * Ends every reply that was running when the server stopped (see `SessionActor.recover`). Reads
   * only the running index, whose size is the number of replies that were running, never every
   * parked reply.
   */
  async recover(): Promise<number> {
    const ids: string[] = [];
    for await (const sessionId of this.store.keys(RunningRecord)) ids.push(sessionId);
    for (const sessionId of ids) {
      try {
        await this.withActor(sessionId, undefined, (actor) => actor.serial(() => actor.recover()));
      } catch (err) {
        if (!(err instanceof StorageFailure) && !isParkwayError(err, "data_loss")) {
          this.log.error({ err, session: sessionId }, "could not recover the reply");
        }
      }
    }
    return ids.length;
  }
}
