import type { AgentDefinition } from "../agent/agent.js";
import type { EventBody } from "../agent/events.js";
import { type ReplyOutcome, runReply } from "../agent/reply-loop.js";
import type { Msg, ToolCallBlock } from "../agent/types.js";
import { failedPrecondition } from "../common/errors.js";
import { newId } from "../common/ids.js";
import type { Logger } from "../common/logger.js";
import type { Store, StoreBatch } from "../store/store.js";
import { EventLog } from "./event-log.js";
import {
  MessageRecord,
  messageKey,
  type ReplyData,
  ReplyRecord,
  type SessionData,
  SessionRecord,
  type SessionStatus,
} from "./records.js";
import type { StoredEvent, StreamItem } from "./stored-event.js";
import { Subscriber } from "./subscriber.js";

/** What a settled reply looks like to a waiting caller (the unary Reply RPC). */
export interface ReplySettled {
  message: Msg;
  status: SessionStatus;
  pending: ToolCallBlock[];
}

/** A reply being run or parked, with what only lives in memory. */
interface ActiveReply {
  data: ReplyData;
  controller: AbortController;
  task?: Promise<void>;
}

const SETTLE_EVENTS = new Set(["reply_end", "reply_parked"]);

/**
 * One session: applies its inputs one at a time, runs its reply, logs every event with its seq and
 * fans it out to every attached stream. Events are written behind in batches (coalesced per tick);
 * state transitions commit in the same batch as the events that describe them.
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

  constructor(
    private data: SessionData,
    private readonly agent: AgentDefinition,
    private readonly store: Store,
    private readonly logger: Logger,
  ) {
    this.log = new EventLog(store, data.id, data.lastSeq);
  }

  get id(): string {
    return this.data.id;
  }

  get snapshot(): SessionData {
    return { ...this.data, lastSeq: this.log.lastSeq };
  }

  /** Calls awaiting an answer (asking or submitted) of the parked reply. */
  get pendingCalls(): ToolCallBlock[] {
    return (this.active?.data.message.content ?? []).filter(
      (b): b is ToolCallBlock =>
        b.type === "tool_call" && (b.state === "asking" || b.state === "submitted"),
    );
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
    for (const sub of this.subscribers) sub.push({ kind: "event", event });
    this.scheduleFlush();
    return event;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      void this.commit().catch((err: unknown) =>
        this.logger.error({ err, session: this.id }, "event log write failed"),
      );
    });
  }

  /**
   * Writes every pending event, the session record when changed, and `extra` operations in one
   * atomic batch, after the writes before it. With `sync`, resolves once on disk.
   */
  commit(options: { sync?: boolean; extra?: (batch: StoreBatch) => void } = {}): Promise<void> {
    const batch = this.store.batch();
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

  // ---- attach ----

  /**
   * Attaches a stream: it receives every stored event with seq > afterSeq, then live events, with
   * no gap and no duplicate between the two.
   */
  attach(
    afterSeq: number,
    signal: AbortSignal,
    maxQueued?: number,
  ): {
    lastSeq: number;
    items: AsyncGenerator<StreamItem>;
    subscriber: Subscriber;
  } {
    const subscriber = new Subscriber(maxQueued);
    const upto = this.log.lastSeq;
    this.subscribers.add(subscriber);
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
      yield* subscriber.items(signal);
    } finally {
      this.subscribers.delete(subscriber);
    }
  }

  // ---- inputs ----

  /** Starts a reply for a user message; refused while a reply is running or parked. */
  startReply(text: string): { replyId: string; settled: Promise<ReplySettled> } {
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
    this.data = { ...this.data, messageCount: index + 1, status: "running", replyId };
    this.dirty = true;
    this.active = { data, controller: new AbortController() };
    const settled = this.whenSettled(replyId);
    this.emit(replyId, { type: "reply_start", name: this.agent.id, role: "assistant" });
    void this.commit({
      extra: (b) =>
        b.put(MessageRecord, messageKey(this.id, index), user).put(ReplyRecord, this.id, data),
    });
    this.run(this.active);
    return { replyId, settled };
  }

  /** Interrupts the running reply; a no-op on an idle session. */
  interrupt(replyId: string): Promise<void> {
    const active = this.active;
    if (!active) return Promise.resolve();
    if (replyId && replyId !== active.data.replyId) {
      return Promise.reject(
        failedPrecondition(`reply ${replyId} is not the session's current reply`, [
          {
            type: "REPLY",
            subject: replyId,
            description: `current reply is ${active.data.replyId}`,
          },
        ]),
      );
    }
    active.controller.abort(new Error("interrupted by the user"));
    return active.task ?? Promise.resolve();
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

  // ---- running ----

  private run(active: ActiveReply): void {
    const replyId = active.data.replyId;
    active.task = (async () => {
      let outcome: ReplyOutcome;
      try {
        await this.writing; // the user message is stored before the history is read
        const history = await this.loadHistory(this.data.messageCount);
        const progress = { iteration: active.data.iteration };
        outcome = await runReply({
          agent: this.agent,
          history,
          message: active.data.message,
          progress,
          signal: active.controller.signal,
          emit: (body) => {
            if (SETTLE_EVENTS.has(body.type)) return; // emitted below, with the state change
            this.emit(replyId, body);
          },
        });
        active.data.iteration = progress.iteration;
      } catch (err) {
        this.logger.error({ err, session: this.id, reply: replyId }, "reply failed");
        const error = { code: "internal", message: "the reply failed on the server" };
        active.data.message.finishedReason = "error";
        active.data.message.error = error;
        outcome = { kind: "finished", finishedReason: "error", error };
      }
      await this.settle(active, outcome);
    })().finally(() => {
      active.task = undefined;
    });
  }

  private async settle(active: ActiveReply, outcome: ReplyOutcome): Promise<void> {
    const replyId = active.data.replyId;
    const message = active.data.message;
    if (outcome.kind === "finished") {
      const index = this.data.messageCount;
      this.active = undefined;
      this.data = { ...this.data, status: "idle", messageCount: index + 1, replyId: undefined };
      this.emit(replyId, {
        type: "reply_end",
        finishedReason: outcome.finishedReason,
        ...(outcome.error ? { error: outcome.error } : {}),
      });
      await this.commit({
        extra: (b) =>
          b.put(MessageRecord, messageKey(this.id, index), message).del(ReplyRecord, this.id),
      });
    }
    const waiters = this.settleWaiters.get(replyId) ?? [];
    this.settleWaiters.delete(replyId);
    const settled: ReplySettled = { message, status: this.data.status, pending: this.pendingCalls };
    for (const resolve of waiters) resolve(settled);
  }

  private async loadHistory(count: number): Promise<Msg[]> {
    const out: Msg[] = [];
    if (count === 0) return out;
    for await (const [, msg] of this.store.entries(MessageRecord, {
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
