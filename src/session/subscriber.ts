import { ParkwayError } from "../common/errors.js";
import type { StoredEvent, StreamItem } from "./stored-event.js";

/** Most items handed to the stream's writer at once. */
const BATCH = 256;
/** Unread events one stream may fall behind by default (config `limits.streamBacklogEvents`). */
export const DEFAULT_STREAM_BACKLOG_EVENTS = 10_000;

/**
 * One attached stream's queue: the session pushes items, the stream's writer pulls them (and pulls
 * only as fast as the client reads: it waits for the transport's drain). Bounded: past `maxQueued`
 * unread items the subscriber is closed with RESOURCE_EXHAUSTED naming `limits.streamBacklogEvents`
 * (reason STREAM_BACKLOG, so clients can reattach with after_seq), and the queue is dropped; a client
 * that stops reading cannot grow the server's memory, and the session keeps running.
 */
export class Subscriber {
  private readonly queue: StreamItem[] = [];
  /** Who reads the items (see `items`), woken by every change. */
  private reader: { wake(): void } | undefined;
  private closedWith: { error?: Error } | undefined;
  private onFailed: ((error: Error) => void) | undefined;

  constructor(private readonly maxQueued = DEFAULT_STREAM_BACKLOG_EVENTS) {}

  /** Adds an item; false if the subscriber is closed. */
  push(item: StreamItem): boolean {
    if (this.closedWith) return false;
    if (this.queue.length >= this.maxQueued) {
      this.close(
        new ParkwayError(
          "resource_exhausted",
          `limit streamBacklogEvents (${this.maxQueued}) reached: the stream fell more than ${this.maxQueued} events behind (is the client still reading?); reattach with after_seq`,
          {
            reason: "STREAM_BACKLOG",
            metadata: { limit: "streamBacklogEvents", value: String(this.maxQueued) },
          },
        ),
      );
      return false;
    }
    this.queue.push(item);
    this.notify();
    return true;
  }

  /** Ends the subscription after the queued items; with an error, the stream ends with it. */
  close(error?: Error): void {
    if (this.closedWith) return;
    this.closedWith = error === undefined ? {} : { error };
    if (error !== undefined) this.queue.length = 0;
    this.notify();
    if (error !== undefined) this.onFailed?.(error);
  }

  /**
   * Calls `listener` when the subscription is closed with an error (at once if it already was), so
   * that a writer blocked on a client that stopped reading can end the stream without waiting.
   */
  whenFailed(listener: (error: Error) => void): void {
    this.onFailed = listener;
    const error = this.closedWith?.error;
    if (error !== undefined) listener(error);
  }

  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  /** The abort of the signal given to `items`: wakes the reader. */
  handleEvent(): void {
    this.notify();
  }

  private notify(): void {
    this.reader?.wake();
  }

  /** The events queued and not taken yet. */
  queuedEvents(): StoredEvent[] {
    return this.queue.flatMap((item) => (item.kind === "event" ? [item.event] : []));
  }

  /** Whether items wait to be taken. */
  get hasQueued(): boolean {
    return this.queue.length > 0;
  }

  /** The next batch of queued items (at most `BATCH`; none when nothing is queued). */
  takeQueued(): StreamItem[] {
    return this.queue.splice(0, BATCH);
  }

  /**
   * The next batch (at most `BATCH` items) when one is ready; done once `signal` aborted or the
   * subscription closed with nothing queued; the close error, if any, is thrown; undefined while
   * the reader must wait. Queued items are still taken after `signal` aborts.
   */
  take(signal: AbortSignal): IteratorResult<StreamItem[], undefined> | undefined {
    if (this.queue.length > 0) return { value: this.takeQueued(), done: false };
    if (signal.aborted) return DONE;
    if (this.closedWith) {
      if (this.closedWith.error !== undefined) throw this.closedWith.error;
      return DONE;
    }
    return undefined;
  }

  /**
   * Yields the queued items in batches of at most `BATCH` until closed or `signal` aborts; throws
   * the close error, if any. Items queued when `signal` aborts are still yielded (a server that
   * stops sends what it has written), unless the consumer stops first. `ended` runs once the items
   * end, however they end (exhausted, failed or returned). One reader per subscriber.
   */
  items(signal: AbortSignal, ended?: () => void): StreamItems {
    const reader = new SubscriberReader(this, signal, ended);
    this.reader = reader;
    return reader;
  }
}

const DONE: IteratorReturnResult<undefined> = { value: undefined, done: true };

/** A batch of `subscriber`'s queued items, taken the first time its value is read. */
function batchWhenRead(subscriber: Subscriber): IteratorYieldResult<StreamItem[]> {
  let items: StreamItem[] | undefined;
  return {
    done: false,
    get value() {
      return (items ??= subscriber.takeQueued());
    },
  };
}

/** A stream's items, pulled one batch at a time (an async generator of batches is one). */
export interface StreamItems extends AsyncIterable<StreamItem[]> {
  next(): Promise<IteratorResult<StreamItem[], unknown>>;
  /** Stops reading; what ends with the items runs. */
  return(value?: undefined): Promise<IteratorResult<StreamItem[], unknown>>;
}

/**
 * The reader `Subscriber.items` returns: a plain object, not an async generator, so that a stream
 * waiting for its next item holds one promise and nothing more.
 */
class SubscriberReader implements StreamItems {
  private resolve: ((result: IteratorResult<StreamItem[], undefined>) => void) | undefined;
  private reject: ((error: unknown) => void) | undefined;
  private finished = false;

  constructor(
    private readonly subscriber: Subscriber,
    private readonly signal: AbortSignal,
    private ended: (() => void) | undefined,
  ) {
    // The subscriber is its own abort listener (`handleEvent`): no closure per stream.
    signal.addEventListener("abort", subscriber, { once: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<StreamItem[], undefined>> {
    if (this.finished) return Promise.resolve(DONE);
    try {
      const result = this.take();
      if (result) return Promise.resolve(result);
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    return new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  return(): Promise<IteratorResult<StreamItem[], undefined>> {
    this.finish();
    this.settle(DONE);
    return Promise.resolve(DONE);
  }

  /**
   * Something changed: a reader waiting gets its batch, its end or its error. A batch is taken from
   * the queue when the reader reads it, not now: the items pushed until then (a text block's start
   * and its first delta, a park's REQUIRE_* and REPLY_PARKED) come in the same batch, and the
   * stream's writer hands them to the transport together; the reader still wakes at the first.
   */
  wake(): void {
    if (!this.resolve) return;
    if (this.subscriber.hasQueued) {
      this.settle(batchWhenRead(this.subscriber));
      return;
    }
    try {
      const result = this.take();
      if (result) this.settle(result);
    } catch (err) {
      const reject = this.reject!;
      this.resolve = this.reject = undefined;
      reject(err);
    }
  }

  private settle(result: IteratorResult<StreamItem[], undefined>): void {
    const resolve = this.resolve;
    this.resolve = this.reject = undefined;
    resolve?.(result);
  }

  /** The subscriber's next batch (see `Subscriber.take`); the reader finishes with the items. */
  private take(): IteratorResult<StreamItem[], undefined> | undefined {
    let result: IteratorResult<StreamItem[], undefined> | undefined;
    try {
      result = this.subscriber.take(this.signal);
    } catch (err) {
      this.finish();
      throw err;
    }
    if (result?.done) this.finish();
    return result;
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.signal.removeEventListener("abort", this.subscriber);
    const ended = this.ended;
    this.ended = undefined;
    ended?.();
  }
}

/** A stream attached to a hub. */
export interface Attached {
  /** The seq of the last stored event when it attached (its replay ends there). */
  lastSeq: number;
  /** The replay, then live items; ending it (or its first `next` never coming) ends nothing else. */
  items: StreamItems;
  subscriber: Subscriber;
  /**
   * Removes the stream from the hub, whether or not `items` was ever read (a generator that never
   * started runs no `finally`). Idempotent.
   */
  detach: () => void;
}
