import type { Readable } from "node:stream";

/**
 * Reads a call's incoming messages as an async iterable without handing the stream to `for await`
 * (which destroys the stream, and so cancels the call, when the reader stops early). Ends when the
 * client half-closes or `signal` aborts; pauses the stream while `highWaterMark` messages are unread.
 */
export function readMessages<T>(
  stream: Readable,
  signal: AbortSignal,
  highWaterMark = 64,
): AsyncIterable<T> {
  return new MessageReader<T>(stream, signal, highWaterMark);
}

/**
 * The messages of `readMessages` (listening from its creation on). A class with bound listeners
 * rather than closures: every attached stream holds one, so it is kept small.
 */
class MessageReader<T> implements AsyncIterableIterator<T> {
  private readonly queue: T[] = [];
  private ended = false;
  private failure: unknown;
  private wake: (() => void) | undefined;
  private readonly onData = this.data.bind(this);
  private readonly onEnd = this.end.bind(this);
  private readonly onError = this.error.bind(this);

  constructor(
    private readonly stream: Readable,
    private readonly signal: AbortSignal,
    private readonly highWaterMark: number,
  ) {
    stream.on("data", this.onData);
    stream.on("end", this.onEnd);
    stream.on("error", this.onError);
    signal.addEventListener("abort", this.onEnd, { once: true });
    if (signal.aborted) this.ended = true;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<T>> {
    for (;;) {
      const msg = this.queue.shift();
      if (msg !== undefined) {
        if (this.queue.length < this.highWaterMark / 2 && this.stream.isPaused()) {
          this.stream.resume();
        }
        return { value: msg, done: false };
      }
      if (this.ended) {
        this.cleanup();
        if (this.failure !== undefined && !this.signal.aborted) {
          throw this.failure instanceof Error
            ? this.failure
            : new Error("stream failed", { cause: this.failure });
        }
        return { value: undefined, done: true };
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  return(): Promise<IteratorResult<T>> {
    this.ended = true;
    this.cleanup();
    return Promise.resolve({ value: undefined, done: true });
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private data(msg: T): void {
    this.queue.push(msg);
    if (this.queue.length >= this.highWaterMark) this.stream.pause();
    this.notify();
  }

  private end(): void {
    this.ended = true;
    this.notify();
  }

  private error(err: unknown): void {
    this.failure = err;
    this.ended = true;
    this.notify();
  }

  private cleanup(): void {
    this.stream.off("data", this.onData);
    this.stream.off("end", this.onEnd);
    this.stream.off("error", this.onError);
    this.signal.removeEventListener("abort", this.onEnd);
  }
}
