import { ParkwayError } from "../common/errors.js";
import type { StreamItem } from "./stored-event.js";

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
  private wake: (() => void) | undefined;
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
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /**
   * Yields the queued items in batches of at most `BATCH` until closed or `signal` aborts; throws
   * the close error, if any. Items queued when `signal` aborts are still yielded (a server that
   * stops sends what it has written), unless the consumer stops first.
   */
  async *items(signal: AbortSignal): AsyncGenerator<StreamItem[]> {
    // The subscriber is its own abort listener (`handleEvent`): no closure per stream.
    signal.addEventListener("abort", this, { once: true });
    try {
      for (;;) {
        if (this.queue.length > 0) {
          yield this.queue.splice(0, BATCH);
          continue;
        }
        if (signal.aborted) return;
        if (this.closedWith) {
          if (this.closedWith.error !== undefined) throw this.closedWith.error;
          return;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      signal.removeEventListener("abort", this);
    }
  }
}

/** A stream attached to a hub. */
export interface Attached {
  /** The seq of the last stored event when it attached (its replay ends there). */
  lastSeq: number;
  /** The replay, then live items; ending it (or its first `next` never coming) ends nothing else. */
  items: AsyncGenerator<StreamItem[]>;
  subscriber: Subscriber;
  /**
   * Removes the stream from the hub, whether or not `items` was ever read (a generator that never
   * started runs no `finally`). Idempotent.
   */
  detach: () => void;
}
