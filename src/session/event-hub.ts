import type { EventBody } from "../agent/events.js";
import type { ToolCallBlock } from "../agent/types.js";
import type { Logger } from "../common/logger.js";
import type { Store, StoreBatch } from "../store/store.js";
import type { HubOptions } from "./hub-options.js";
import { EventLog } from "./event-log.js";
import type { StoredEvent } from "./stored-event.js";
import { noteAnnounced, reannouncement } from "./reannouncement.js";
import { replayThenTail } from "./hub-replay.js";
import { type Attached, Subscriber } from "./subscriber.js";
import { Visibility } from "./visibility.js";
import { writeFailure } from "./write-failure.js";

/** Events whose write is synced, with the state they announce, before any stream sees them. */
const SYNC_EVENTS = new Set<EventBody["type"]>([
  "require_user_confirm",
  "require_external_execution",
  "reply_parked",
]);

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * A session's event log and its fan-out to attached streams, with group commit: each event gets the
 * next seq, and a stream sees it once the write that stores it has finished, so no client sees an
 * event that changes state before it is stored; with `visibleAhead`, the reply's start and the
 * model's stream go out as they are logged (`Visibility`). While one write is in flight, the events
 * emitted meanwhile gather into the next write. A write that holds a REQUIRE_* or REPLY_PARKED event is
 * synced. A write that fails stops the hub: its events and those emitted after them are dropped
 * (the next seq is again the one after the last stored event), every waiting and later commit
 * rejects, the attached streams end with UNAVAILABLE, and `onFailure` is told; the hub writes
 * nothing more.
 *
 * It is told what to write: the events emitted, the records given with them (`emitWith`, `commit`,
 * `stage`), synced or not, and the session's record (`head`); it tells only `HubOptions`.
 */
export class EventHub {
  /** The session's events, stored and pending (reads go there). */
  readonly log: EventLog;
  private readonly subscribers = new Set<Subscriber>();
  private draining: Promise<void> | undefined;
  /** A write scheduled for after the current turn of the event loop. */
  private soon: NodeJS.Immediate | undefined;
  /** The events of the write in flight. */
  private inFlight: StoredEvent[] = [];
  private waiters: Waiter[] = [];
  private extras: ((batch: StoreBatch) => void)[] = [];
  private wantSync = false;
  private syncEvent = false;
  /** Set by `settled`: the next write takes every pending event, a model call's start alone too. */
  private flushAll = false;
  private written: number;
  readonly shown: Visibility;
  /** What ends the streams and refuses commits once a write failed. */
  private failed: Error | undefined;

  constructor(
    private readonly store: Store,
    readonly sessionId: string,
    lastSeq: number,
    private readonly logger: Logger,
    private readonly options: HubOptions = {},
    /** The last seq used, past `lastSeq` (the last stored event's) when seqs were skipped. */
    startSeq = lastSeq,
  ) {
    this.log = new EventLog(store, sessionId, startSeq, lastSeq);
    this.written = lastSeq;
    this.shown = new Visibility(startSeq, options.visibleAhead ?? 0, this, options.holdStart);
  }

  /** The last seq used (by an event emitted, written or not, or skipped after a crash). */
  get lastSeq(): number {
    return this.log.lastSeq;
  }

  /** The seq of the last event written (and handed to `HubOptions.committed`). */
  get writtenSeq(): number {
    return this.written;
  }

  /** The seq of the last event emitted (written or not). */
  get lastEventSeq(): number {
    return this.log.lastEventSeq;
  }

  get attached(): number {
    return this.subscribers.size;
  }

  /**
   * True while a write is in flight or scheduled, or an event waits for the next one (a model
   * call's start, see `emit`): until then the store is behind memory, and the session must not be
   * read from it again (`HubOptions.idle` tells when it is done).
   */
  get writing(): boolean {
    return this.draining !== undefined || this.soon !== undefined || this.log.hasPending;
  }

  /**
   * Logs an event; attached streams receive it once it is written. The write starts after the
   * current turn of the event loop, so events emitted together share one write: a model turn's
   * tail, the REQUIRE_* after it and the REPLY_PARKED that follows go out in one synced batch.
   * With `visibleAhead`, a model call's start with nothing else to write (logged during a write
   * too) waits for the next write, the model's first answer: a write less per model call.
   */
  emit(replyId: string, body: EventBody): void {
    if (this.failed) return;
    this.logged(replyId, body);
    if (!this.waitsForNext()) this.kickSoon();
  }

  /** True when all that waits is a model call's start, for the next write (see `emit`). */
  private waitsForNext(): boolean {
    const pending = this.log.peekPending();
    if (pending.length !== 1 || pending[0]!.body.type !== "model_call_start") return false;
    const alone = this.waiters.length === 0 && this.extras.length === 0 && !this.wantSync;
    return alone && !this.flushAll && !this.syncEvent && (this.options.visibleAhead ?? 0) > 0;
  }

  /**
   * Logs events that belong with a change of state, and writes them together with it (`extra`) in
   * one synced or unsynced atomic batch; streams see the events once it is written.
   */
  emitWith(
    replyId: string,
    bodies: EventBody[],
    options: { sync?: boolean; extra?: (batch: StoreBatch) => void },
  ): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    for (const body of bodies) this.logged(replyId, body);
    return this.commit(options);
  }

  /** Appends an event to the log, and gives it to the streams when it may go before its write. */
  private logged(replyId: string, body: EventBody): void {
    const event = this.log.append(replyId, body);
    this.options.observe?.(body);
    if (SYNC_EVENTS.has(body.type)) this.syncEvent = true;
    this.shown.offer(event, this.written);
  }

  /** Gives an event to every attached stream. */
  fanOut(event: StoredEvent): void {
    for (const sub of this.subscribers) sub.push({ kind: "event", event });
    this.options.shown?.(event);
  }

  /**
   * Writes every event emitted so far, with `extra`, in one atomic batch after the writes before it
   * (synced with `sync`), then makes the events visible. Resolves once written. An unsynced write
   * whose events streams were given ahead of it (a reply's start) is built after the current turn of
   * the event loop, once their frames have left; a synced one (a park, an answer) at once.
   */
  commit(options: { sync?: boolean; extra?: (batch: StoreBatch) => void } = {}): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (options.extra) this.extras.push(options.extra);
    if (options.sync) this.wantSync = true;
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    // Building the batch and handing it to the store would hold those frames back until it is done.
    if (!this.wantSync && !this.syncEvent && this.shown.given > this.written) this.kickSoon();
    else this.kick();
    return done;
  }

  /**
   * Adds `extra` to the write that carries the next event emitted, without writing by itself: what
   * it puts is stored together with that event (or with an earlier one still waiting to be written).
   */
  stage(extra: (batch: StoreBatch) => void): void {
    if (!this.failed) this.extras.push(extra);
  }

  /** Resolves once every event emitted so far, or up to seq `through`, is written (or failed). */
  async settled(through = Infinity): Promise<void> {
    while (this.writing && this.written < through) {
      this.flushAll = true;
      if (!this.draining) this.kick();
      await this.draining;
    }
  }

  private kickSoon(): void {
    if (this.draining || this.soon) return;
    this.soon = setImmediate(() => {
      this.soon = undefined;
      this.kick();
    });
  }

  private kick(): void {
    if (this.soon) {
      clearImmediate(this.soon);
      this.soon = undefined;
    }
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
      if (this.waiters.length > 0 || (this.log.hasPending && !this.waitsForNext())) this.kick();
      else if (!this.log.hasPending) this.options.idle?.();
    });
  }

  private async drain(): Promise<void> {
    for (;;) {
      if (this.failed) return;
      if (!this.log.hasPending && this.waiters.length === 0) return;
      if (this.waitsForNext()) return;
      const events = this.log.drainPending();
      this.flushAll = false;
      this.inFlight = events;
      const sync = this.wantSync || this.syncEvent;
      const extras = this.extras;
      const waiters = this.waiters;
      this.waiters = [];
      this.extras = [];
      this.wantSync = false;
      this.syncEvent = false;
      try {
        const batch = this.store.batch();
        this.log.putInto(batch, events);
        this.options.head?.writeInto(batch, this.log.lastSeq);
        for (const extra of extras) extra(batch);
        this.options.fence?.(batch);
        if (batch.length > 0) await batch.write({ sync });
      } catch (err) {
        this.writeFailed(err, waiters);
        return;
      }
      if (events.length > 0) this.written = events[events.length - 1]!.seq;
      if (events.length > 0) this.options.committed?.(events);
      this.inFlight = [];
      // Those waiting for the write (an input's acknowledgement) go before what was logged since.
      this.shown.written(events, this.log.peekPending(), this.written, waiters.length > 0);
      for (const w of waiters) w.resolve();
    }
  }

  /**
   * Stops the hub after a failed write (or a failure to build it): drops what was not stored,
   * tells `onFailure`, rejects the writes waiting, and ends the attached streams.
   */
  private writeFailed(err: unknown, waiters: Waiter[]): void {
    const fields = this.options.logFields?.() ?? { session: this.sessionId };
    const failure = writeFailure(err, this.logger, fields);
    this.failed = failure;
    this.log.rollback(this.written);
    this.inFlight = [];
    this.extras = [];
    this.wantSync = false;
    this.syncEvent = false;
    const waiting = [...waiters, ...this.waiters];
    this.waiters = [];
    this.options.onFailure?.(failure);
    for (const w of waiting) w.reject(err);
    this.closeAll(failure);
  }

  /**
   * Attaches a stream: every stored event with seq > afterSeq, then the open REQUIRE_* of a parked
   * reply that the stream would not otherwise see (`pending()` at the replay's end, minus the calls
   * announced in the replay, queued for the stream since the attach, or in events not written yet:
   * a reply that parks during the replay is announced once), then live events; no gap and no
   * duplicate between them.
   */
  attach(
    afterSeq: number,
    signal: AbortSignal,
    pending: () => { replyId: string; calls: ToolCallBlock[] } | undefined,
    maxQueued?: number,
  ): Attached {
    const subscriber = new Subscriber(maxQueued);
    if (this.failed) subscriber.close(this.failed);
    // Events after `upto` are not written yet: they reach this stream as they are, like any other.
    const upto = this.written;
    for (const event of [...this.inFlight, ...this.log.peekPending()]) {
      // Shown and not written yet: this stream gets them after the replay, as the others did.
      if (event.seq > Math.max(afterSeq, upto) && event.seq <= this.shown.given) {
        subscriber.push({ kind: "event", event });
      }
    }
    this.subscribers.add(subscriber);
    const detach = () => this.subscribers.delete(subscriber);
    const announce = (replayed: Set<string>) => {
      const announced = new Set<string>();
      const live = [...subscriber.queuedEvents(), ...this.inFlight, ...this.log.peekPending()];
      for (const event of live) noteAnnounced(event, announced);
      return reannouncement(this.sessionId, pending(), announced, replayed);
    };
    const range = { afterSeq: Math.min(afterSeq, upto), upto, signal };
    const items = replayThenTail(this.log, subscriber, range, announce, detach);
    return { lastSeq: upto, items, subscriber, detach };
  }

  /** Ends every attached stream with `error`. */
  closeAll(error: Error): void {
    for (const sub of this.subscribers) sub.close(error);
  }
}
