import type { AgentDefinition } from "../agent/agent.js";
import type { EventBody } from "../agent/events.js";
import type { PermissionState } from "../agent/gate.js";
import { interruptCalls, type ReplyOutcome, runReply } from "../agent/reply-loop.js";
import { finishWithoutRunning } from "../agent/tool-runner.js";
import type { Msg, Rule, ToolCallBlock } from "../agent/types.js";
import { failedPrecondition, ParkwayError } from "../common/errors.js";
import { newId } from "../common/ids.js";
import type { Logger } from "../common/logger.js";
import type { Store, StoreBatch } from "../store/store.js";
import type { Tool } from "../tools/tool.js";
import { EventLog } from "./event-log.js";
import {
  ExpiryRecord,
  expiryKey,
  MessageRecord,
  messageKey,
  type ReplyData,
  ReplyRecord,
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
import type { StoredEvent, StreamItem } from "./stored-event.js";
import { Subscriber } from "./subscriber.js";
import { waitingNotice } from "./waiting-notice.js";

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
}

/** A reply being run or parked, with what only lives in memory. */
interface ActiveReply {
  data: ReplyData;
  controller: AbortController;
  task?: Promise<void>;
}

/** Events that become visible only once the state they announce is on disk (synced). */
const SYNC_EVENTS = new Set<EventBody["type"]>([
  "require_user_confirm",
  "require_external_execution",
  "reply_parked",
]);

function isPending(b: Msg["content"][number]): b is ToolCallBlock {
  return b.type === "tool_call" && (b.state === "asking" || b.state === "submitted");
}

/**
 * One session: applies its inputs one at a time, runs and parks its reply, logs every event with its
 * seq and fans it out to every attached stream. Deltas are written behind in batches; a REQUIRE_*
 * or REPLY_PARKED event reaches no client before the state it announces is committed with a synced
 * write, and every answer commits atomically with the events it produces.
 */
export class SessionActor {
  private readonly log: EventLog;
  private readonly subscribers = new Set<Subscriber>();
  private chain: Promise<unknown> = Promise.resolve();
  private writing: Promise<void> = Promise.resolve();
  private flushScheduled = false;
  private dirty = false;
  private active: ActiveReply | undefined;
  private readonly settleWaiters = new Map<string, ((s: ReplySettled) => void)[]>();
  private disposed = false;
  private holds = 0;
  private held: StoredEvent[] = [];
  private rules: readonly Rule[] = [];
  readonly tools: ReadonlyMap<string, Tool>;

  constructor(
    private data: SessionData,
    private readonly agent: AgentDefinition,
    private readonly deps: ActorDeps,
    sessionTools: readonly Tool[] = [],
  ) {
    this.log = new EventLog(deps.store, data.id, data.lastSeq);
    this.tools = new Map([...agent.tools, ...sessionTools.map((t) => [t.name, t] as const)]);
  }

  get id(): string {
    return this.data.id;
  }

  get snapshot(): SessionData {
    return { ...this.data, lastSeq: this.log.lastSeq };
  }

  /** Calls awaiting an answer (asking or submitted) of the parked reply. */
  get pendingCalls(): ToolCallBlock[] {
    return (this.active?.data.message.content ?? []).filter(isPending);
  }

  /** True when nothing needs this actor in memory: no reply running and no stream attached. */
  get evictable(): boolean {
    return this.subscribers.size === 0 && this.active?.task === undefined;
  }

  /** Runs `fn` after every input before it has been applied. */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Restores the active reply read from the store (a parked reply). */
  restore(reply: ReplyData | undefined): void {
    if (reply) this.active = { data: reply, controller: new AbortController() };
  }

  // ---- events ----

  private emit(replyId: string, body: EventBody): StoredEvent {
    const event = this.log.append(replyId, body);
    if (SYNC_EVENTS.has(body.type)) {
      this.held.push(event);
      this.holds += 1;
      void this.syncPoint();
    } else if (this.holds > 0) {
      this.held.push(event);
    } else {
      this.fanOut(event);
    }
    this.scheduleFlush();
    return event;
  }

  private fanOut(event: StoredEvent): void {
    for (const sub of this.subscribers) sub.push({ kind: "event", event });
  }

  /** Commits the reply as it is now with a synced write, then releases the held events. */
  private async syncPoint(): Promise<void> {
    const reply = this.active ? structuredClone(this.active.data) : undefined;
    const deadlines = [
      ...new Set(this.pendingCalls.flatMap((c) => (c.expiresAt ? [c.expiresAt] : []))),
    ];
    try {
      await this.commit({
        sync: true,
        ...(reply
          ? {
              extra: (b) => {
                b.put(ReplyRecord, this.id, reply);
                for (const at of deadlines) {
                  b.put(ExpiryRecord, expiryKey(at, this.id), { sessionId: this.id, at });
                }
              },
            }
          : {}),
      });
      for (const at of deadlines) this.deps.expiry?.note(at);
    } catch (err) {
      this.deps.logger.error({ err, session: this.id }, "synced write failed");
      const error = new ParkwayError(
        "unavailable",
        "the server could not store the session; reattach",
      );
      for (const sub of this.subscribers) sub.close(error);
    }
    this.holds -= 1;
    if (this.holds === 0) {
      const held = this.held;
      this.held = [];
      for (const event of held) this.fanOut(event);
    }
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      void this.commit().catch((err: unknown) =>
        this.deps.logger.error({ err, session: this.id }, "event log write failed"),
      );
    });
  }

  /**
   * Writes every pending event, the session record when changed, and `extra` operations in one
   * atomic batch, after the writes before it. With `sync`, resolves once on disk.
   */
  commit(options: { sync?: boolean; extra?: (batch: StoreBatch) => void } = {}): Promise<void> {
    const batch = this.deps.store.batch();
    this.log.drainInto(batch);
    if (this.dirty || batch.length > 0 || options.extra) {
      this.dirty = false;
      this.data = { ...this.data, lastSeq: this.log.lastSeq, updatedAt: new Date().toISOString() };
      batch.put(SessionRecord, this.data.id, this.data);
    }
    options.extra?.(batch);
    const write = this.writing.then(() =>
      batch.length > 0 ? batch.write({ sync: options.sync === true }) : undefined,
    );
    this.writing = write.catch(() => undefined);
    return write;
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
   * Attaches a stream: it receives every stored event with seq > afterSeq, then the open REQUIRE_*
   * of a parked reply again (marked replayed), then live events, with no gap and no duplicate.
   */
  attach(
    afterSeq: number,
    signal: AbortSignal,
    maxQueued?: number,
  ): { lastSeq: number; items: AsyncGenerator<StreamItem>; subscriber: Subscriber } {
    const subscriber = new Subscriber(maxQueued);
    const upto = this.log.lastSeq - this.held.length;
    this.subscribers.add(subscriber);
    for (const event of this.held) subscriber.push({ kind: "event", event });
    const items = this.replayThenTail(subscriber, Math.min(afterSeq, upto), upto, signal);
    return { lastSeq: upto, items, subscriber };
  }

  private async *replayThenTail(
    subscriber: Subscriber,
    afterSeq: number,
    upto: number,
    signal: AbortSignal,
  ): AsyncGenerator<StreamItem> {
    try {
      await this.commit();
      for await (const event of this.log.read(afterSeq, upto, signal)) {
        yield { kind: "event", event: { ...event, replayed: true } };
      }
      yield* this.reannounce();
      yield* subscriber.items(signal);
    } finally {
      this.subscribers.delete(subscriber);
    }
  }

  /** The pending calls of a parked reply, announced again for a stream that just attached. */
  private *reannounce(): Generator<StreamItem> {
    const active = this.active;
    if (!active || active.task) return;
    const calls = this.pendingCalls;
    const asking = calls.filter((c) => c.state === "asking");
    const submitted = calls.filter((c) => c.state === "submitted");
    const base = {
      id: newId("evt"),
      seq: 0,
      sessionId: this.id,
      replyId: active.data.replyId,
      createdAt: new Date().toISOString(),
      replayed: true,
    };
    if (asking.length > 0) {
      yield {
        kind: "event",
        event: { ...base, body: { type: "require_user_confirm", toolCalls: asking } },
      };
    }
    if (submitted.length > 0) {
      yield {
        kind: "event",
        event: {
          ...base,
          id: newId("evt"),
          body: { type: "require_external_execution", toolCalls: submitted },
        },
      };
    }
  }

  // ---- inputs ----

  /** Starts a reply for a user message; refused while a reply is running or parked. */
  async startReply(text: string): Promise<{ replyId: string; settled: Promise<ReplySettled> }> {
    this.assertIdle();
    const now = new Date().toISOString();
    const user: Msg = {
      id: newId("msg"),
      role: "user",
      name: "user",
      content: text === "" ? [] : [{ type: "text", id: newId("blk"), text }],
      createdAt: now,
    };
    const replyId = newId("reply");
    const data: ReplyData = {
      replyId,
      message: { id: replyId, role: "assistant", name: this.agent.id, content: [], createdAt: now },
      iteration: 0,
      state: "running",
      startedAt: now,
    };
    const index = this.data.messageCount;
    this.data = { ...this.data, messageCount: index + 1 };
    this.setStatus("running", replyId);
    const active: ActiveReply = { data, controller: new AbortController() };
    this.active = active;
    const settled = this.whenSettled(replyId);
    this.emit(replyId, { type: "reply_start", name: this.agent.id, role: "assistant" });
    await this.commit({
      extra: (b) =>
        b.put(MessageRecord, messageKey(this.id, index), user).put(ReplyRecord, this.id, data),
    });
    this.run(active);
    return { replyId, settled };
  }

  /** Interrupts the running or parked reply; a no-op on an idle session. */
  async interrupt(replyId: string): Promise<void> {
    const active = this.active;
    if (!active) return;
    this.assertReply(active, replyId);
    if (active.task) {
      active.controller.abort(new Error("interrupted by the user"));
      return active.task;
    }
    this.interruptParked(active);
    await this.settle(active, { kind: "finished", finishedReason: "interrupted" });
  }

  private interruptParked(active: ActiveReply, text?: string): void {
    interruptCalls(
      { message: active.data.message, emit: (body) => this.emit(active.data.replyId, body) },
      text,
    );
    active.data.message.finishedReason = "interrupted";
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
    if (this.agent.expiryPolicy === "interrupt") {
      this.interruptParked(
        active,
        `The tool call timed out after ${seconds}s without an answer; the reply was interrupted.`,
      );
      await this.settle(active, {
        kind: "finished",
        finishedReason: "interrupted",
        error: { code: "confirm_timeout", message: `no answer within ${seconds}s` },
      });
      return;
    }
    const message = structuredClone(active.data.message);
    const buffered: EventBody[] = [];
    for (const id of due.map((c) => c.id)) {
      const call = message.content.find(
        (b): b is ToolCallBlock => b.type === "tool_call" && b.id === id,
      )!;
      const what = call.state === "asking" ? "confirmation" : "the external result";
      message.content.push(
        finishWithoutRunning(
          call,
          "denied",
          `Timed out: no ${what} within ${seconds}s, so the call was not run.`,
          (body) => buffered.push(body),
        ),
      );
    }
    await this.applyAnswer(active, message, buffered);
    void this.resume(active);
  }

  /** Applies confirmations to the parked reply, then resumes it. */
  async confirm(
    replyId: string,
    answers: ConfirmAnswer[],
    principal: string,
  ): Promise<{ settled: Promise<ReplySettled> }> {
    const active = this.parked(replyId, "confirmations");
    await this.refreshRules();
    const message = structuredClone(active.data.message);
    const buffered: EventBody[] = [];
    const ctx = this.answerContext(principal, buffered);
    const accepted = applyConfirmations(message, answers, ctx);
    const { fresh } = await this.deps.rules.prepare(accepted);
    await this.applyAnswer(active, message, buffered, (b) => this.deps.rules.write(b, fresh));
    this.deps.rules.committed(fresh);
    return { settled: this.resume(active) };
  }

  /** Applies external results to the parked reply, then resumes it. */
  async externalResults(
    replyId: string,
    answers: ExternalAnswer[],
  ): Promise<{ settled: Promise<ReplySettled> }> {
    const active = this.parked(replyId, "external results");
    const message = structuredClone(active.data.message);
    const buffered: EventBody[] = [];
    applyExternalResults(message, answers, this.answerContext("", buffered));
    await this.applyAnswer(active, message, buffered);
    return { settled: this.resume(active) };
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
      emit: (body) => buffered.push(body),
    };
  }

  /**
   * Commits an answer: the reply's new state and the events it produced, in one synced atomic
   * batch, then makes them visible. The answer was validated on a copy, so a refused answer left
   * nothing behind.
   */
  private async applyAnswer(
    active: ActiveReply,
    message: Msg,
    events: EventBody[],
    extra?: (b: StoreBatch) => void,
  ): Promise<void> {
    active.data = { ...active.data, message, state: "running" };
    this.setStatus("running", active.data.replyId);
    this.holds += 1;
    for (const body of events) this.held.push(this.log.append(active.data.replyId, body));
    const data = structuredClone(active.data);
    try {
      await this.commit({
        sync: true,
        extra: (b) => {
          b.put(ReplyRecord, this.id, data);
          extra?.(b);
        },
      });
    } finally {
      this.holds -= 1;
      if (this.holds === 0) {
        const held = this.held;
        this.held = [];
        for (const event of held) this.fanOut(event);
      }
    }
  }

  private resume(active: ActiveReply): Promise<ReplySettled> {
    const settled = this.whenSettled(active.data.replyId);
    active.controller = new AbortController();
    this.run(active);
    return settled;
  }

  private assertReply(active: ActiveReply, replyId: string): void {
    if (replyId && replyId !== active.data.replyId) {
      throw failedPrecondition(`reply ${replyId} is not the session's current reply`, [
        {
          type: "REPLY",
          subject: replyId,
          description: `the current reply is ${active.data.replyId}`,
        },
      ]);
    }
  }

  private parked(replyId: string, what: string): ActiveReply {
    const active = this.active;
    if (!active) {
      throw failedPrecondition(`no reply is parked in session ${this.id}; nothing awaits ${what}`, [
        { type: "SESSION_STATUS", subject: this.id, description: this.data.status },
      ]);
    }
    this.assertReply(active, replyId);
    if (active.task) {
      throw failedPrecondition(
        `reply ${active.data.replyId} is running; nothing awaits ${what} yet`,
        [{ type: "SESSION_STATUS", subject: this.id, description: "running" }],
      );
    }
    return active;
  }

  private assertIdle(): void {
    if (this.disposed) throw failedPrecondition("the session is being deleted");
    const active = this.active;
    if (!active) return;
    if (active.task) {
      throw failedPrecondition(
        `reply ${active.data.replyId} is still running; interrupt it first`,
        [{ type: "SESSION_STATUS", subject: this.id, description: "running" }],
      );
    }
    const pending = this.pendingCalls;
    throw failedPrecondition(
      `reply ${active.data.replyId} is parked waiting for ${pending
        .map(
          (c) => `${c.name} ${c.id} (${c.state === "asking" ? "confirmation" : "external result"})`,
        )
        .join(", ")}; answer or interrupt it first`,
      pending.map((c) => ({
        type: "TOOL_CALL_STATE",
        subject: c.id,
        description: `${c.name} is ${c.state === "asking" ? "awaiting confirmation" : "awaiting an external result"}`,
      })),
    );
  }

  private whenSettled(replyId: string): Promise<ReplySettled> {
    return new Promise((resolve) => {
      const list = this.settleWaiters.get(replyId) ?? [];
      list.push(resolve);
      this.settleWaiters.set(replyId, list);
    });
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
  async setMode(mode: SessionData["mode"]): Promise<PermissionState["mode"]> {
    const next: SessionData = { ...this.data };
    if (mode) next.mode = mode;
    else delete next.mode;
    this.data = next;
    this.dirty = true;
    await this.commit({ sync: true });
    return this.data.mode ?? this.agent.permissionMode;
  }

  /** Loads the rules in effect for this session (stored and configured). */
  async refreshRules(): Promise<void> {
    const stored = await this.deps.rules.forSession(this.id, this.agent.id);
    this.rules = [...this.agent.rules, ...stored];
  }

  // ---- running ----

  private run(active: ActiveReply): void {
    const replyId = active.data.replyId;
    active.task = (async () => {
      let outcome: ReplyOutcome;
      try {
        await this.writing; // the history is stored before it is read
        await this.refreshRules();
        const history = await this.loadHistory(this.data.messageCount);
        const progress = { iteration: active.data.iteration };
        outcome = await runReply({
          agent: { ...this.agent, tools: this.tools },
          history,
          message: active.data.message,
          progress,
          signal: active.controller.signal,
          emit: (body) => {
            if (body.type !== "reply_end") this.emit(replyId, body);
          },
          permissions: () => ({
            mode: this.data.mode ?? this.agent.permissionMode,
            rules: this.rules,
            workingDirectories: this.data.workingDirectories,
            homeDir: this.deps.homeDir,
          }),
        });
        active.data.iteration = progress.iteration;
      } catch (err) {
        this.deps.logger.error({ err, session: this.id, reply: replyId }, "reply failed");
        const error = { code: "internal", message: "the reply failed on the server" };
        active.data.message.finishedReason = "error";
        active.data.message.error = error;
        outcome = { kind: "finished", finishedReason: "error", error };
      }
      active.task = undefined;
      await this.settle(active, outcome);
    })();
  }

  private async settle(active: ActiveReply, outcome: ReplyOutcome): Promise<void> {
    const replyId = active.data.replyId;
    const message = active.data.message;
    if (outcome.kind === "finished") {
      const index = this.data.messageCount;
      this.active = undefined;
      this.data = { ...this.data, messageCount: index + 1 };
      this.setStatus("idle");
      this.emit(replyId, {
        type: "reply_end",
        finishedReason: outcome.finishedReason,
        ...(outcome.error ? { error: outcome.error } : {}),
      });
      await this.commit({
        extra: (b) =>
          b.put(MessageRecord, messageKey(this.id, index), message).del(ReplyRecord, this.id),
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
      this.emit(replyId, { type: "reply_parked", message: waitingNotice(message, pending) });
      await this.writing;
    }
    const waiters = this.settleWaiters.get(replyId) ?? [];
    this.settleWaiters.delete(replyId);
    const settled: ReplySettled = {
      message: outcome.kind === "parked" ? waitingNotice(message, this.pendingCalls) : message,
      status: this.data.status,
      pending: this.pendingCalls,
    };
    for (const resolve of waiters) resolve(settled);
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

  /** Stops the reply, ends every stream with `error`, and waits for pending writes. */
  async dispose(error: Error): Promise<void> {
    this.disposed = true;
    const active = this.active;
    if (active?.task) {
      active.controller.abort(new Error("session deleted"));
      await active.task.catch(() => undefined);
    }
    for (const sub of this.subscribers) sub.close(error);
    await this.writing;
  }
}
