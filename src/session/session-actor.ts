import type { AgentDefinition } from "../agent/agent.js";
import type { PermissionState } from "../agent/gate.js";
import type { EventBody } from "../agent/events.js";
import type { Logger } from "../common/logger.js";
import { noTelemetry, type Telemetry } from "../common/telemetry.js";
import type { Outbox } from "./notifications/outbox.js";
import type { Store, StoreBatch } from "../store/store.js";
import type { Tool } from "../tools/tool.js";
import { EventHub } from "./event-hub.js";
import type { HubOptions } from "./hub-options.js";
import type { StoredEvent } from "./stored-event.js";
import type { Attached } from "./subscriber.js";
import { confirmations, externalResults } from "./prepared-answers.js";
import type { ReplyData, RequestData, SessionData } from "./records.js";
import type { RecoveredReply } from "./reply-endings.js";
import type { ConfirmAnswer, ExternalAnswer } from "./reply-inputs.js";
import { type LifecycleSession, ReplyLifecycle } from "./reply-lifecycle.js";
import { ReplyOutcomes, type ReplySettled } from "./reply-outcomes.js";
import type { RequestTicket } from "./request-ids.js";
import type { RuleBook } from "./rule-book.js";
import { SessionHead } from "./session-head.js";
import type { Lease } from "./session-leases.js";
import { type SessionLogFields, sessionLog } from "./session-log.js";
import { SessionPermissions } from "./session-permissions.js";
import { SerialWork } from "./serial-work.js";
import { type SessionView, sessionView } from "./session-view.js";
import { VISIBLE_AHEAD } from "./seq-epoch.js";
import type { ActorDeps as Deps } from "./actor-deps.js";
import { leaseStamp, resumeUnder } from "./lease-seqs.js";

/** What every actor shares. */
export type ActorDeps = Deps<SessionActor>;

/** What an input needs to be applied once: the ticket of its request id, when the client gave one. */
type Request = RequestTicket | undefined;

/**
 * One session in memory: applies its inputs one at a time (each exactly once, atomically with the
 * events it produces), attaches streams, and holds its parts — the session record (`SessionHead`),
 * the event log with its fan-out (`EventHub`), the reply's lifecycle (`ReplyLifecycle`), what
 * callers wait for (`ReplyOutcomes`) and the permission state (`SessionPermissions`).
 *
 * Memory is a cache of the store. When a write fails (or the store fails), the actor stops: its
 * running reply is aborted, the callers waiting for the reply get the error, every later input is
 * refused with it, and the session manager drops the actor, so the session is read again from the
 * store — where the input that failed left nothing.
 */
export class SessionActor implements LifecycleSession, HubOptions {
  readonly events: EventHub;
  /** The session record (see `SessionHead`). */
  readonly head: SessionHead;
  /** What callers wait for (see `ReplyOutcomes`). */
  readonly outcomes: ReplyOutcomes;
  /** The mode and rules a decision sees (see `SessionPermissions`). */
  readonly permissions: SessionPermissions;
  readonly reply: ReplyLifecycle;
  private held: Lease | undefined;
  readonly telemetry: Telemetry;
  /**
   * HubOptions: how far the model's stream may go out before its write (see `SeqEpoch`, and with
   * several nodes `resumeUnder`).
   */
  readonly visibleAhead: number;
  private readonly inputs = new SerialWork();
  /** Why the actor stopped, once a write failed. */
  private stopped: Error | undefined;

  // The actor is the parts' session (fields and prototype getters, no per-actor objects or
  // closures: an attached session costs less).
  constructor(
    data: SessionData,
    readonly agent: AgentDefinition,
    private readonly deps: ActorDeps,
    /** Its agent's tools, with the external tools the session declared (see `toolsOf`). */
    readonly tools: ReadonlyMap<string, Tool> = agent.tools,
    /** The lease it was loaded under, when several nodes share the database. */
    lease?: Lease,
  ) {
    this.head = new SessionHead(data, deps.epoch?.stamp());
    this.telemetry = deps.telemetry ?? noTelemetry;
    this.visibleAhead = deps.epoch || deps.leases ? VISIBLE_AHEAD : 0;
    const start = lease ? resumeUnder(this.head, lease) : deps.epoch?.resume(this.head);
    this.lease = lease;
    this.events = new EventHub(deps.store, data.id, data.lastSeq, deps.logger, this, start);
    this.outcomes = new ReplyOutcomes(deps.store, this.head);
    this.permissions = new SessionPermissions(this.head, agent, deps.rules, deps.homeDir);
    this.reply = new ReplyLifecycle(this);
  }

  get hub(): EventHub {
    return this.events;
  }

  /** The session's lease on this node, when several nodes share the database. */
  get lease(): Lease | undefined {
    return this.held;
  }

  /** The lease taken (again): the session's record is written under it from now on. */
  set lease(lease: Lease | undefined) {
    this.held = lease;
    if (lease) this.head.restamp(leaseStamp(lease));
  }

  /** HubOptions: with several nodes, a reply's start waits for its write (see `resumeUnder`). */
  get holdStart(): boolean {
    return this.deps.leases !== undefined;
  }

  /** HubOptions: the streams that follow the session on this node get each event shown. */
  shown(event: StoredEvent): void {
    this.deps.shown?.(this.head.id, event);
  }

  get store(): Store {
    return this.deps.store;
  }

  get logger(): Logger {
    return this.deps.logger;
  }

  get rules(): RuleBook {
    return this.deps.rules;
  }

  get keepFinishedReplies(): number | undefined {
    return this.deps.keepFinishedReplies;
  }

  get outbox(): Outbox | undefined {
    return this.deps.outbox;
  }

  get expiry(): ActorDeps["expiry"] {
    return this.deps.expiry;
  }

  /** HubOptions: every event goes to the reply's metrics and spans. */
  observe(body: EventBody): void {
    this.reply.observe(body);
  }

  /** HubOptions: every write checks the session's lease, when it has one. */
  fence(batch: StoreBatch): void {
    if (this.lease) this.deps.leases?.fence(batch, this.lease);
  }

  /** HubOptions: events were stored; the streams following the session get them. */
  committed(events: readonly StoredEvent[]): void {
    this.deps.published?.(this.head.id, events);
  }

  /** HubOptions: what its log lines say: the session, its reply and the reply's trace. */
  logFields(): SessionLogFields {
    return sessionLog(this.head.id, this.reply.data);
  }

  /** HubOptions: a write of the session failed; the actor stops (see `fail`). */
  onFailure(error: Error): void {
    this.fail(error);
  }

  /** A reply stopped running, or (HubOptions) its writes are done: the actor may leave memory. */
  idle(): void {
    this.deps.idle?.(this);
  }

  /**
   * Stops the actor with `error`: aborts the running reply, rejects the callers waiting for a
   * reply, ends the attached streams, and tells the manager. Idempotent.
   */
  fail(error: Error): void {
    if (this.stopped) return;
    this.stopped = error;
    this.reply.halt(error);
    this.outcomes.rejectAll(error);
    this.events.closeAll(error);
    this.deps.failed?.(this);
  }

  get id(): string {
    return this.head.id;
  }

  /** True while a reply is running (not parked). */
  get running(): boolean {
    return this.reply.task !== undefined;
  }

  /** The tenant the session belongs to. */
  get tenant(): string {
    return this.head.tenant;
  }

  get snapshot(): SessionData {
    return { ...this.head.data, lastSeq: this.events.lastEventSeq };
  }

  /** The session as the API shows it, with its parked reply's calls and its usage so far. */
  get view(): SessionView {
    return sessionView(this.snapshot, this.reply.message);
  }

  /** True when nothing needs this actor in memory: no reply, no stream, nothing left to write. */
  get evictable(): boolean {
    return this.events.attached === 0 && this.reply.task === undefined && !this.events.writing;
  }

  /** Runs `fn` after every input before it has been applied; refused once the actor stopped. */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    return this.inputs.run(() => (this.stopped ? Promise.reject(this.stopped) : fn()));
  }

  /** Restores the active reply read from the store. */
  restore(reply: ReplyData | undefined): void {
    this.reply.restore(reply);
  }

  /** The first outcome of an input applied before (see `ReplyOutcomes.first`). */
  firstOutcome(requestId: string, record: RequestData): Promise<ReplySettled | undefined> {
    return this.outcomes.first(requestId, record, this.reply.data?.replyId);
  }

  /**
   * Attaches a stream: stored events after `afterSeq`, then the pending calls of a parked reply
   * announced again (marked replayed), then live events.
   */
  attach(afterSeq: number, signal: AbortSignal, maxQueued?: number): Attached {
    return this.events.attach(afterSeq, signal, () => this.reply.parked(), maxQueued);
  }

  // Inputs (see ReplyLifecycle); `caller` is the traceparent of the call that brought one.
  startReply(
    text: string,
    requestId?: Request,
    caller?: string,
  ): Promise<{ replyId: string; settled: Promise<ReplySettled> }> {
    return this.reply.start(text, requestId, caller);
  }

  interrupt(
    replyId: string,
    principal: string,
    requestId?: Request,
  ): Promise<{ settled?: Promise<ReplySettled> }> {
    return this.reply.interrupt(replyId, principal, requestId);
  }

  /** Applies confirmations to the parked reply (refusing bad ones whole), then resumes it. */
  confirm(
    replyId: string,
    answers: ConfirmAnswer[],
    principal: string,
    requestId?: Request,
    caller?: string,
  ): Promise<{ settled: Promise<ReplySettled> }> {
    const prepare = confirmations(this, answers, principal);
    return this.reply.answer(replyId, "confirmations", prepare, requestId, caller);
  }

  /** Applies external results to the parked reply (refusing bad ones whole), then resumes it. */
  externalResults(
    replyId: string,
    answers: ExternalAnswer[],
    principal: string,
    requestId?: Request,
    caller?: string,
  ): Promise<{ settled: Promise<ReplySettled> }> {
    const prepare = externalResults(this, answers, principal);
    return this.reply.answer(replyId, "external results", prepare, requestId, caller);
  }

  expire(now: Date): Promise<"done" | "busy"> {
    return this.reply.expire(now);
  }

  recover(): Promise<RecoveredReply | undefined> {
    return this.reply.recover();
  }

  /** The permission state a decision in this session sees now. */
  permissionState(): Promise<PermissionState> {
    return this.permissions.state();
  }

  /** Interrupts a running reply for a shutdown (see `ReplyLifecycle.stop`); awaits its writes. */
  async stop(graceMs = 0): Promise<void> {
    await this.reply.stop(graceMs);
    await this.events.settled();
  }

  /** Stops the reply, ends every stream with `error`, waits for pending writes; refuses inputs. */
  async dispose(error: Error): Promise<void> {
    this.stopped ??= error;
    await this.reply.dispose();
    this.events.closeAll(error);
    await this.events.settled();
  }
}
