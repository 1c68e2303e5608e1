import type { AgentDefinition } from "../agent/agent.js";
import type { EventBody } from "../agent/events.js";
import type { PermissionState } from "../agent/gate.js";
import { interruptCalls, type ReplyOutcome, runReply } from "../agent/reply-loop.js";
import { InterruptReason } from "../agent/tool-runner.js";
import type { Msg, Rule, ToolCallBlock } from "../agent/types.js";
import type { Logger } from "../common/logger.js";
import type { Store, StoreBatch } from "../store/store.js";
import type { Tool } from "../tools/tool.js";
import {
  confirmAudit,
  decisionAudit,
  expiryAudit,
  externalAudit,
  interruptAudit,
  modeAudit,
} from "./audit-entries.js";
import { writeAudit } from "./audit-records.js";
import { EventHub, type HubOwner } from "./event-hub.js";
import { foldEvents } from "./fold-events.js";
import { pendingCalls } from "./pending-calls.js";
import { assertIdle, assertParked, assertReply } from "./input-checks.js";
import {
  EventRecord,
  ExpiryRecord,
  expiryKey,
  MessageRecord,
  messageKey,
  type ReplyData,
  ReplyRecord,
  type RequestData,
  RequestRecord,
  requestKey,
  RunningRecord,
  type SessionData,
  SessionRecord,
  type SessionStatus,
} from "./records.js";
import {
  type AnswerContext,
  applyConfirmations,
  applyExternalResults,
  type ConfirmAnswer,
  type ExternalAnswer,
} from "./reply-inputs.js";
import type { RuleBook } from "./rule-book.js";
import type { StreamItem } from "./stored-event.js";
import type { Subscriber } from "./subscriber.js";
import { denyExpired, newReply } from "./new-reply.js";
import { type RequestTicket, writeRequest } from "./request-ids.js";
import { waitingNotice } from "./waiting-notice.js";
import { DEFAULT_MAX_REPLY_BYTES } from "../common/message-size.js";

/** What a settled reply looks like to a waiting caller (the unary Reply RPC). */
export interface ReplySettled {
  message: Msg;
  status: SessionStatus;
  pending: ToolCallBlock[];
}

/** What every actor shares. */
export interface ActorDeps {
  store: Store;
  logger: Logger;
  rules: RuleBook;
  homeDir: string;
  /** Told about every parked call's deadline. */
  expiry?: { note(at: string): void };
  /** Keep the events of this many finished replies per session; undefined keeps all. */
  keepFinishedReplies?: number;
  /**
   * Told when a write of the actor failed: its memory may be ahead of the store, so it must not be
   * used again (the next use loads the session from the store).
   */
  failed?: (actor: SessionActor) => void;
  /**
   * Told when a reply stopped running (finished, parked or failed): with no stream attached and no
   * other use, the actor can leave memory.
   */
  idle?: (actor: SessionActor) => void;
}

/** An applied input's request id whose first outcome is the reply's next settlement. */
interface AwaitingRequest {
  requestId: string;
  record: RequestData;
}

/** A reply being run or parked, with what only lives in memory. */
interface ActiveReply {
  data: ReplyData;
  /** Stops the model call and the start of further tools. */
  controller: AbortController;
  /** Stops the tools that are running. */
  tools: AbortController;
  task?: Promise<void>;
  /** Request ids applied since the reply last settled: a park records its notice as theirs. */
  awaiting?: AwaitingRequest[];
}

/** Why a shutdown interrupted a reply, as its REPLY_END and interrupted calls say. */
const SHUTDOWN = {
  error: { code: "server_shutdown", message: "the server shut down while the reply was running" },
  resultText: "The tool call was interrupted because the server shut down.",
};

/** What an input needs to be applied once: the ticket of its request id, when the client gave one. */
type Request = RequestTicket | undefined;

/** A request id being recorded with its input. */
interface NotedRequest extends AwaitingRequest {
  write: (batch: StoreBatch) => void;
}

/** A caller waiting for a reply to finish or park. */
interface SettleWaiter {
  resolve: (settled: ReplySettled) => void;
  reject: (err: unknown) => void;
}

/**
 * One session: applies its inputs one at a time (each exactly once, atomically with the events it
 * produces), runs and parks its reply, and recovers a reply that a crash cut short. Its events go
 * through an `EventHub` (the log and the fan-out to attached streams).
 *
 * Memory is a cache of the store. When a write fails (or the store fails), the actor stops: its
 * running reply is aborted, the callers waiting for the reply get the error, every later input is
 * refused with it, and the session manager drops the actor, so the session is read again from the
 * store — where the input that failed left nothing.
 */
export class SessionActor implements HubOwner {
  readonly events: EventHub;
  readonly tools: ReadonlyMap<string, Tool>;
  private chain: Promise<unknown> = Promise.resolve();
  private dirty = false;
  private active: ActiveReply | undefined;
  private readonly settleWaiters = new Map<string, SettleWaiter[]>();
  /** The first outcome of inputs applied here whose reply has not settled (and stored it) yet. */
  private readonly outcomes = new Map<string, Promise<ReplySettled>>();
  private disposed = false;
  /** Why the actor stopped, once a write failed. */
  private stopped: Error | undefined;
  private rules: readonly Rule[] = [];

  constructor(
    private data: SessionData,
    private readonly agent: AgentDefinition,
    private readonly deps: ActorDeps,
    sessionTools: readonly Tool[] = [],
  ) {
    this.tools =
      sessionTools.length === 0
        ? agent.tools
        : new Map([...agent.tools, ...sessionTools.map((t) => [t.name, t] as const)]);
    // The actor is its hub's owner (methods, not closures: an attached session costs less).
    this.events = new EventHub(deps.store, data.id, data.lastSeq, this, deps.logger);
  }

  /** HubOwner: the session record joins every write in which it changed. */
  everyWrite(batch: StoreBatch, lastSeq: number): void {
    if (!this.dirty && lastSeq === this.data.lastSeq) return;
    this.dirty = false;
    this.data = { ...this.data, lastSeq, updatedAt: new Date().toISOString() };
    batch.put(SessionRecord, this.id, this.data);
  }

  /** HubOwner: a synced write that announces REQUIRE_* or REPLY_PARKED carries a checkpoint. */
  syncWrite(batch: StoreBatch, lastSeq: number): void {
    this.checkpoint(batch, lastSeq);
  }

  /** HubOwner: once parked calls are stored, their deadlines are scheduled. */
  synced(): void {
    for (const c of this.pendingCalls) if (c.expiresAt) this.deps.expiry?.note(c.expiresAt);
  }

  /** HubOwner: a write failed; the actor stops (see the class). */
  writeFailed(error: Error): void {
    this.fail(error);
  }

  /**
   * Stops the actor with `error`: aborts the running reply, rejects the callers waiting for a
   * reply, ends the attached streams, and tells the manager. Idempotent.
   */
  fail(error: Error): void {
    if (this.stopped) return;
    this.stopped = error;
    this.active?.controller.abort(error);
    const waiters = [...this.settleWaiters.values()].flat();
    this.settleWaiters.clear();
    for (const w of waiters) w.reject(error);
    this.events.closeAll(error);
    this.deps.failed?.(this);
  }

  get id(): string {
    return this.data.id;
  }

  /** True while a reply is running (not parked). */
  get running(): boolean {
    return this.active?.task !== undefined;
  }

  /** The tenant the session belongs to. */
  get tenant(): string {
    return this.data.tenant;
  }

  get snapshot(): SessionData {
    return { ...this.data, lastSeq: this.events.lastSeq };
  }

  /** Calls awaiting an answer (asking or submitted) of the parked reply. */
  get pendingCalls(): ToolCallBlock[] {
    return pendingCalls(this.active?.data.message);
  }

  /** True when nothing needs this actor in memory: no reply running and no stream attached. */
  get evictable(): boolean {
    return this.events.attached === 0 && this.active?.task === undefined;
  }

  /** Runs `fn` after every input before it has been applied; refused once the actor stopped. */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = () => (this.stopped ? Promise.reject(this.stopped) : fn());
    const next = this.chain.then(run, run);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Restores the active reply read from the store. */
  restore(reply: ReplyData | undefined): void {
    if (reply) {
      this.active = {
        data: reply,
        controller: new AbortController(),
        tools: new AbortController(),
      };
    }
  }

  /** The number the next request id of this session is recorded under. */
  get nextRequest(): number {
    return this.data.requestCount ?? 0;
  }

  /**
   * Records an input's request id: counts it in the session record (written with the input), and
   * returns what writes it into the input's batch. Its first outcome is the reply's next settlement:
   * a park stores the waiting notice with the id, an end is the final message stored as history
   * message `messageIndex`.
   */
  private noteRequest(
    ticket: Request,
    active: ActiveReply,
    messageIndex: number,
  ): NotedRequest | undefined {
    if (!ticket) return undefined;
    const order = this.nextRequest;
    this.data = { ...this.data, requestCount: order + 1 };
    this.dirty = true;
    const record = {
      appliedAt: new Date().toISOString(),
      kind: ticket.kind,
      digest: ticket.digest,
      replyId: active.data.replyId,
      messageIndex,
      order,
    };
    return {
      requestId: ticket.requestId,
      record,
      write: (b) => writeRequest(b, this.id, ticket, record),
    };
  }

  /**
   * Once an input's request id is stored: until the reply settles, a retry waits for `settled`, and
   * a park stores its notice as the id's first outcome.
   */
  private awaitOutcome(
    active: ActiveReply,
    request: NotedRequest | undefined,
    settled: Promise<ReplySettled>,
  ): void {
    // A reply that has already ended stored its final message, the outcome, with its end.
    if (!request || this.active !== active) return;
    (active.awaiting ??= []).push({ requestId: request.requestId, record: request.record });
    this.outcomes.set(request.requestId, settled);
  }

  /** Forgets the in-memory outcomes of `awaiting` once their settlement is stored. */
  private settledRequests(awaiting: AwaitingRequest[] | undefined): void {
    for (const { requestId } of awaiting ?? []) this.outcomes.delete(requestId);
  }

  /**
   * The first outcome of an input applied before, from its request record: the waiting notice when
   * the reply parked after it, otherwise the reply's final message; while the reply still runs,
   * its settlement. Undefined when the record predates outcomes (version 1).
   */
  async firstOutcome(requestId: string, record: RequestData): Promise<ReplySettled | undefined> {
    const fromParked = (parked: NonNullable<RequestData["parked"]>): ReplySettled => ({
      message: parked.notice,
      status: parked.status,
      pending: parked.notice.content.filter((b) => b.type === "tool_call"),
    });
    if (record.parked) return fromParked(record.parked);
    const inMemory = this.outcomes.get(requestId);
    if (inMemory) return inMemory;
    // The settlement may have been stored since the record was read.
    const now =
      (await this.deps.store.get(RequestRecord, requestKey(this.id, requestId))) ?? record;
    if (now.parked) return fromParked(now.parked);
    if (now.messageIndex === undefined || now.replyId === undefined) return undefined;
    const final = await this.deps.store.get(MessageRecord, messageKey(this.id, now.messageIndex));
    if (final?.id === now.replyId) return { message: final, status: "idle", pending: [] };
    // Applied before a restart and not ended yet: its reply's recovery settles it.
    if (this.active?.data.replyId === now.replyId) return this.whenSettled(now.replyId);
    return undefined;
  }

  /**
   * The reply record as it is now (a checkpoint at `lastSeq`), the parked calls' deadlines, and
   * the running index, into a batch.
   */
  private checkpoint(batch: StoreBatch, lastSeq: number): void {
    const active = this.active;
    if (!active) return;
    active.data.snapshotSeq = lastSeq;
    batch.put(ReplyRecord, this.id, active.data); // encoded (copied) at once
    if (active.data.state === "parked") batch.del(RunningRecord, this.id);
    for (const call of this.pendingCalls) {
      if (call.expiresAt) {
        batch.put(ExpiryRecord, expiryKey(call.expiresAt, this.id), {
          sessionId: this.id,
          at: call.expiresAt,
        });
      }
    }
  }

  private emit(replyId: string, body: EventBody): void {
    this.events.emit(replyId, body);
  }

  private setStatus(status: SessionStatus, replyId?: string): void {
    const next: SessionData = { ...this.data, status };
    if (replyId) next.replyId = replyId;
    else delete next.replyId;
    this.data = next;
    this.dirty = true;
  }

  // ---- attach ----

  /**
   * Attaches a stream: stored events after `afterSeq`, then the pending calls of a parked reply
   * announced again (marked replayed), then live events.
   */
  attach(
    afterSeq: number,
    signal: AbortSignal,
    maxQueued?: number,
  ): { lastSeq: number; items: AsyncGenerator<StreamItem[]>; subscriber: Subscriber } {
    return this.events.attach(
      afterSeq,
      signal,
      () => {
        const active = this.active;
        if (!active || active.task) return undefined;
        return { replyId: active.data.replyId, calls: this.pendingCalls };
      },
      maxQueued,
    );
  }

  // ---- inputs ----

  /** Starts a reply for a user message; refused while a reply is running or parked. */
  async startReply(
    text: string,
    requestId?: Request,
  ): Promise<{ replyId: string; settled: Promise<ReplySettled> }> {
    assertIdle(this.id, this.active, this.disposed);
    const { user, reply: data } = newReply(this.agent.id, text, this.events.lastSeq);
    const replyId = data.replyId;
    const now = data.startedAt;
    const index = this.data.messageCount;
    const keep = this.deps.keepFinishedReplies;
    this.data = {
      ...this.data,
      messageCount: index + 1,
      ...(keep === undefined
        ? {}
        : {
            replyStarts: [...(this.data.replyStarts ?? []), this.events.lastSeq + 1].slice(
              -(keep + 1),
            ),
          }),
    };
    this.setStatus("running", replyId);
    const active: ActiveReply = {
      data,
      controller: new AbortController(),
      tools: new AbortController(),
    };
    this.active = active;
    const settled = this.whenSettled(replyId);
    const request = this.noteRequest(requestId, active, index + 1);
    // The event and the state it starts are written in one batch.
    await this.events.emitWith(
      replyId,
      [{ type: "reply_start", name: this.agent.id, role: "assistant" }],
      {
        extra: (b) => {
          b.put(MessageRecord, messageKey(this.id, index), user);
          b.put(ReplyRecord, this.id, data);
          b.put(RunningRecord, this.id, { replyId, since: now });
          request?.write(b);
        },
      },
    );
    this.awaitOutcome(active, request, settled);
    this.run(active);
    return { replyId, settled };
  }

  /**
   * Interrupts the running or parked reply, resolving once it has ended, with a promise of its
   * settlement; a no-op on an idle session.
   */
  async interrupt(
    replyId: string,
    principal: string,
    requestId?: Request,
  ): Promise<{ settled?: Promise<ReplySettled> }> {
    const active = this.active;
    if (!active) return {};
    assertReply(active.data.replyId, replyId);
    const settled = this.whenSettled(active.data.replyId);
    const request = this.noteRequest(requestId, active, this.data.messageCount);
    const extra = (b: StoreBatch) => {
      request?.write(b);
      writeAudit(b, this.tenant, [interruptAudit(this.id, active.data.replyId, principal)]);
    };
    if (active.task) {
      const task = active.task;
      const reason = new Error("interrupted by the user");
      active.controller.abort(reason);
      active.tools.abort(reason);
      await this.events.commit({ extra });
      this.awaitOutcome(active, request, settled);
      await task;
      return { settled };
    }
    await this.settle(
      active,
      { kind: "finished", finishedReason: "interrupted" },
      this.interruptParked(active),
      extra,
    );
    this.awaitOutcome(active, request, settled);
    return { settled };
  }

  /** Interrupts every unfinished call; returns the events, to be written with the reply's end. */
  private interruptParked(active: ActiveReply, text?: string): EventBody[] {
    const events: EventBody[] = [];
    interruptCalls({ message: active.data.message, emit: (body) => events.push(body) }, text);
    active.data.message.finishedReason = "interrupted";
    return events;
  }

  /** Applies confirmations to the parked reply (refusing bad ones whole), then resumes it. */
  async confirm(
    replyId: string,
    answers: ConfirmAnswer[],
    principal: string,
    requestId?: Request,
  ): Promise<{ settled: Promise<ReplySettled> }> {
    const active = assertParked(this.id, this.active, this.data.status, replyId, "confirmations");
    await this.refreshRules();
    const message = structuredClone(active.data.message);
    const buffered: EventBody[] = [];
    const accepted = applyConfirmations(message, answers, this.answerContext(principal, buffered));
    const audit = confirmAudit(this.id, active.data.message, answers, principal);
    const { fresh } = await this.deps.rules.prepare(accepted);
    const settled = this.whenSettled(active.data.replyId);
    const request = this.noteRequest(requestId, active, this.data.messageCount);
    await this.applyAnswer(active, message, buffered, (b) => {
      this.deps.rules.write(b, fresh);
      request?.write(b);
      writeAudit(b, this.tenant, audit);
    });
    this.deps.rules.committed(fresh);
    this.awaitOutcome(active, request, settled);
    this.resume(active);
    return { settled };
  }

  /** Applies external results to the parked reply (refusing bad ones whole), then resumes it. */
  async externalResults(
    replyId: string,
    answers: ExternalAnswer[],
    principal: string,
    requestId?: Request,
  ): Promise<{ settled: Promise<ReplySettled> }> {
    const active = assertParked(
      this.id,
      this.active,
      this.data.status,
      replyId,
      "external results",
    );
    const message = structuredClone(active.data.message);
    const buffered: EventBody[] = [];
    applyExternalResults(message, answers, this.answerContext(principal, buffered));
    const audit = externalAudit(this.id, message, answers, principal);
    const settled = this.whenSettled(active.data.replyId);
    const request = this.noteRequest(requestId, active, this.data.messageCount);
    await this.applyAnswer(active, message, buffered, (b) => {
      request?.write(b);
      writeAudit(b, this.tenant, audit);
    });
    this.awaitOutcome(active, request, settled);
    this.resume(active);
    return { settled };
  }

  /**
   * Applies the agent's expiry policy to the parked calls whose deadline is at or before `now`:
   * "deny" finishes them DENIED with a timed-out reason the model sees and resumes the reply;
   * "interrupt" interrupts the reply. A no-op when nothing is due (the call was answered first).
   */
  async expire(now: Date): Promise<void> {
    const active = this.active;
    if (!active || active.task) return;
    const due = this.pendingCalls.filter(
      (c) => c.expiresAt !== undefined && Date.parse(c.expiresAt) <= now.getTime(),
    );
    if (due.length === 0) return;
    const seconds = Math.round((this.agent.confirmTimeoutMs ?? 0) / 1000);
    const replyId = active.data.replyId;
    if (this.agent.expiryPolicy === "interrupt") {
      const audit = expiryAudit(this.id, replyId, due, `no answer within ${seconds}s; interrupted`);
      const events = this.interruptParked(
        active,
        `The tool call timed out after ${seconds}s without an answer; the reply was interrupted.`,
      );
      await this.settle(
        active,
        {
          kind: "finished",
          finishedReason: "interrupted",
          error: { code: "confirm_timeout", message: `no answer within ${seconds}s` },
        },
        events,
        (b) => writeAudit(b, this.tenant, audit),
      );
      return;
    }
    const audit = expiryAudit(this.id, replyId, due, `no answer within ${seconds}s; denied`);
    const message = structuredClone(active.data.message);
    const buffered: EventBody[] = [];
    denyExpired(message, due, seconds, (body) => buffered.push(body));
    await this.applyAnswer(active, message, buffered, (b) => writeAudit(b, this.tenant, audit));
    this.resume(active);
  }

  private answerContext(principal: string, buffered: EventBody[]): AnswerContext {
    return {
      sessionId: this.id,
      agentId: this.agent.id,
      tools: this.tools,
      rules: this.rules,
      workingDirectories: this.data.workingDirectories,
      homeDir: this.deps.homeDir,
      principal,
      maxReplyBytes: this.agent.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES,
      emit: (body) => buffered.push(body),
    };
  }

  /**
   * Commits an answer: the reply's new state (a checkpoint), the events the answer produced, and
   * `extra`, in one synced atomic batch; only then are the events seen. The answer was validated
   * and applied on a copy, so a refused answer left nothing behind.
   */
  private async applyAnswer(
    active: ActiveReply,
    message: Msg,
    events: EventBody[],
    extra?: (b: StoreBatch) => void,
  ): Promise<void> {
    active.data = { ...active.data, message, state: "running" };
    this.setStatus("running", active.data.replyId);
    await this.events.emitWith(active.data.replyId, events, {
      sync: true,
      extra: (b) => {
        this.checkpoint(b, this.events.lastSeq);
        b.put(RunningRecord, this.id, {
          replyId: active.data.replyId,
          since: new Date().toISOString(),
        });
        extra?.(b);
      },
    });
  }

  private resume(active: ActiveReply): void {
    active.controller = new AbortController();
    active.tools = new AbortController();
    this.run(active);
  }

  /**
   * A promise of the reply's settlement. It rejects when the reply could not be stored; a caller
   * that does not wait for it (a Chat input) leaves that rejection handled.
   */
  private whenSettled(replyId: string): Promise<ReplySettled> {
    const settled = new Promise<ReplySettled>((resolve, reject) => {
      const list = this.settleWaiters.get(replyId) ?? [];
      list.push({ resolve, reject });
      this.settleWaiters.set(replyId, list);
    });
    settled.catch(() => undefined);
    return settled;
  }

  // ---- permissions ----

  /** Loads the rules in effect for this session (stored and configured). */
  async refreshRules(): Promise<void> {
    const stored = await this.deps.rules.forSession(this.id, this.agent.id);
    this.rules = [...this.agent.rules, ...stored];
  }

  /** The permission state a decision in this session sees now. */
  async permissionState(): Promise<PermissionState> {
    await this.refreshRules();
    return {
      mode: this.data.mode ?? this.agent.permissionMode,
      rules: this.rules,
      workingDirectories: this.data.workingDirectories,
      homeDir: this.deps.homeDir,
    };
  }

  /** Sets the session's mode (undefined follows the agent's); takes effect at the next decision. */
  async setMode(mode: SessionData["mode"], principal: string): Promise<PermissionState["mode"]> {
    const next: SessionData = { ...this.data };
    if (mode) next.mode = mode;
    else delete next.mode;
    this.data = next;
    this.dirty = true;
    await this.events.commit({
      sync: true,
      extra: (b) => writeAudit(b, this.tenant, [modeAudit(this.id, mode, principal)]),
    });
    return this.data.mode ?? this.agent.permissionMode;
  }

  // ---- running ----

  private run(active: ActiveReply): void {
    const replyId = active.data.replyId;
    active.task = (async () => {
      let outcome: ReplyOutcome;
      try {
        // The events and acknowledgement of the input that started the reply go out first.
        await new Promise<void>((resolve) => setImmediate(resolve));
        await this.events.settled(); // the history is stored before it is read
        await this.refreshRules();
        const history = await this.loadHistory(this.data.messageCount);
        const progress = { iteration: active.data.iteration };
        outcome = await runReply({
          agent: { ...this.agent, tools: this.tools },
          history,
          message: active.data.message,
          progress,
          signal: active.controller.signal,
          toolSignal: active.tools.signal,
          emit: (body) => this.emit(replyId, body),
          permissions: () => ({
            mode: this.data.mode ?? this.agent.permissionMode,
            rules: this.rules,
            workingDirectories: this.data.workingDirectories,
            homeDir: this.deps.homeDir,
          }),
          decided: (call, decision) => {
            const audit = decisionAudit(this.id, replyId, call, decision);
            this.events.stage((b) => writeAudit(b, this.tenant, [audit]));
          },
        });
        active.data.iteration = progress.iteration;
        if (outcome.kind === "finished" && outcome.error?.code.startsWith("model_")) {
          const model = this.agent.model;
          this.deps.logger.warn(
            {
              session: this.id,
              reply: replyId,
              agent: this.agent.id,
              model: model.name,
              ...(model.endpoint === undefined ? {} : { endpoint: model.endpoint }),
              code: outcome.error.code,
              error: outcome.error.message,
            },
            "model call failed",
          );
        }
        if (
          outcome.kind === "finished" &&
          outcome.finishedReason === "interrupted" &&
          active.controller.signal.reason instanceof InterruptReason
        ) {
          outcome = { ...outcome, error: SHUTDOWN.error };
          active.data.message.error = SHUTDOWN.error;
        }
      } catch (err) {
        if (!this.stopped) {
          this.deps.logger.error({ err, session: this.id, reply: replyId }, "reply failed");
        }
        const error = { code: "internal", message: "the reply failed on the server" };
        active.data.message.finishedReason = "error";
        active.data.message.error = error;
        outcome = { kind: "finished", finishedReason: "error", error };
      }
      active.task = undefined;
      try {
        await this.settle(active, outcome);
      } catch (err) {
        // The write that ends or parks the reply failed: the actor has stopped (the hub told it),
        // and those waiting for the reply got the error.
        if (!this.stopped) {
          this.deps.logger.error({ err, session: this.id, reply: replyId }, "reply not stored");
          this.fail(err instanceof Error ? err : new Error(String(err)));
        }
      } finally {
        this.deps.idle?.(this);
      }
    })();
  }

  /**
   * Ends or parks a reply. Ending writes `before` (events that end its calls), REPLY_END, the message
   * into the history, the removal of the reply and `extra` in one batch; parking announces
   * REPLY_PARKED with a synced checkpoint and, as the first outcome of the request ids applied since
   * the reply last settled, its waiting notice. Those waiting for the settlement get the final
   * message or the waiting notice once it is stored.
   */
  private async settle(
    active: ActiveReply,
    outcome: ReplyOutcome,
    before: EventBody[] = [],
    extra?: (b: StoreBatch) => void,
  ): Promise<void> {
    const replyId = active.data.replyId;
    const message = active.data.message;
    const awaiting = active.awaiting;
    active.awaiting = undefined;
    let settled: ReplySettled;
    if (outcome.kind === "finished") {
      const compaction = await this.compaction();
      const index = this.data.messageCount;
      this.active = undefined;
      this.data = { ...this.data, messageCount: index + 1, ...compaction?.data };
      this.setStatus("idle");
      settled = { message, status: this.data.status, pending: [] };
      const end: EventBody = {
        type: "reply_end",
        finishedReason: outcome.finishedReason,
        ...(outcome.error ? { error: outcome.error } : {}),
      };
      await this.events.emitWith(replyId, [...before, end], {
        extra: (b) => {
          b.put(MessageRecord, messageKey(this.id, index), message)
            .del(ReplyRecord, this.id)
            .del(RunningRecord, this.id);
          for (const key of compaction?.keys ?? []) b.del(EventRecord, key);
          extra?.(b);
        },
      });
    } else {
      const pending = this.pendingCalls;
      active.data.state = "parked";
      this.setStatus(
        pending.some((c) => c.state === "asking")
          ? "awaiting_permission"
          : "awaiting_external_result",
        replyId,
      );
      const notice = waitingNotice(message, pending);
      settled = {
        message: notice,
        status: this.data.status,
        pending: notice.content.filter((b) => b.type === "tool_call"),
      };
      if (awaiting && awaiting.length > 0) {
        const parked = { notice, status: this.data.status };
        this.events.stage((b) => {
          for (const { requestId, record } of awaiting) {
            b.put(RequestRecord, requestKey(this.id, requestId), { ...record, parked });
          }
        });
      }
      // Written (synced, with the checkpoint) before the caller hears that the reply is parked.
      await this.events.emitWith(replyId, [{ type: "reply_parked", message: notice }], {});
    }
    this.settledRequests(awaiting);
    const waiters = this.settleWaiters.get(replyId) ?? [];
    this.settleWaiters.delete(replyId);
    for (const w of waiters) w.resolve(settled);
  }

  /**
   * Ends a reply that was running when the server stopped: its message is rebuilt from the last
   * checkpoint and the logged events after it; every unfinished call gets an INTERRUPTED result
   * (TOOL_RESULT_START unless it was already sent), so a server tool that was running is never run
   * again; then REPLY_END(interrupted, "server restarted").
   */
  async recover(): Promise<void> {
    const active = this.active;
    if (!active || active.task || active.data.state !== "running") return;
    const later: EventBody[] = [];
    for await (const event of this.events.read(active.data.snapshotSeq, this.events.lastSeq)) {
      if (event.replyId === active.data.replyId) later.push(event.body);
    }
    active.data.message = foldEvents(active.data.message, later);
    const events = this.interruptParked(
      active,
      "The tool call was interrupted because the server restarted.",
    );
    await this.settle(
      active,
      {
        kind: "finished",
        finishedReason: "interrupted",
        error: {
          code: "server_restarted",
          message: "the server restarted while the reply was running",
        },
      },
      events,
    );
  }

  /**
   * What ending a reply compacts: the events of the replies older than the last
   * `keepFinishedReplies` (they live on as history messages), deleted in the batch that ends the
   * reply; later attaches to a compacted range are told so.
   */
  private async compaction(): Promise<
    { keys: string[]; data: Pick<SessionData, "compactedThrough" | "replyStarts"> } | undefined
  > {
    const keep = this.deps.keepFinishedReplies;
    const starts = this.data.replyStarts ?? [];
    if (keep === undefined || starts.length <= keep) return undefined;
    const boundary = (starts[starts.length - keep] ?? this.events.lastSeq + 1) - 1;
    const from = this.data.compactedThrough ?? 0;
    if (boundary <= from) return undefined;
    // A chunk that also holds events after the boundary stays; those before it are never served.
    const keys = await this.events.chunkKeys(from, boundary);
    return { keys, data: { compactedThrough: boundary, replyStarts: starts.slice(-keep) } };
  }

  /** The first seq that can still be replayed. */
  get firstAvailableSeq(): number {
    return (this.data.compactedThrough ?? 0) + 1;
  }

  private async loadHistory(count: number): Promise<Msg[]> {
    const out: Msg[] = [];
    if (count === 0) return out;
    for await (const [, msg] of this.deps.store.entries(MessageRecord, {
      gte: messageKey(this.id, 0),
      lt: messageKey(this.id, count),
    })) {
      out.push(msg);
    }
    return out;
  }

  /**
   * Interrupts a running reply for a shutdown: its model call stops and no further tool starts at
   * once; tools that are running get `graceMs` to finish (one that does is recorded with its
   * result, one that does not is interrupted). The reply then ends as interrupted (REPLY_END error
   * `server_shutdown`), unless what it ran leaves it parked. Resolves once its writes are done.
   */
  async stop(graceMs = 0): Promise<void> {
    const active = this.active;
    if (active?.task) {
      const reason = new InterruptReason("the server is shutting down", SHUTDOWN.resultText);
      active.controller.abort(reason);
      const timer = setTimeout(() => active.tools.abort(reason), graceMs);
      await active.task.catch(() => undefined);
      clearTimeout(timer);
    }
    await this.events.settled();
  }

  /** Stops the reply, ends every stream with `error`, and waits for pending writes. */
  async dispose(error: Error): Promise<void> {
    this.disposed = true;
    const active = this.active;
    if (active?.task) {
      const reason = new Error("session deleted");
      active.controller.abort(reason);
      active.tools.abort(reason);
      await active.task.catch(() => undefined);
    }
    this.events.closeAll(error);
    await this.events.settled();
  }
}
