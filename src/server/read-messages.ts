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
  /** The `next` waiting for a message, settled by `notify`. */
  private resolve: ((result: IteratorResult<T>) => void) | undefined;
  private reject: ((error: unknown) => void) | undefined;
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

  next(): Promise<IteratorResult<T>> {
    let result: IteratorResult<T> | undefined;
    try {
      result = this.take();
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    if (result) return Promise.resolve(result);
    return new Promise<IteratorResult<T>>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** The next message, or the end (or failure) once ended with nothing queued; else undefined. */
  private take(): IteratorResult<T> | undefined {
    const msg = this.queue.shift();
    if (msg !== undefined) {
      if (this.queue.length < this.highWaterMark / 2 && this.stream.isPaused()) {
        this.stream.resume();
      }
      return { value: msg, done: false };
    }
    if (!this.ended) return undefined;
    this.cleanup();
    if (this.failure !== undefined && !this.signal.aborted) {
      throw this.failure instanceof Error
        ? this.failure
        : new Error("stream failed", { cause: this.failure });
    }
    return { value: undefined, done: true };
  }

  return(): Promise<IteratorResult<T>> {
    this.ended = true;
    this.cleanup();
    const done: IteratorResult<T> = { value: undefined, done: true };
    const resolve = this.resolve;
    this.resolve = this.reject = undefined;
    resolve?.(done);
    return Promise.resolve(done);
  }

  /** A reader waiting in `next` gets what is there now: a message, the end or the failure. */
  private notify(): void {
    const { resolve, reject } = this;
    if (!resolve || !reject) return;
    let result: IteratorResult<T> | undefined;
    try {
      result = this.take();
    } catch (err) {
      this.resolve = this.reject = undefined;
      reject(err);
      return;
    }
    if (!result) return;
    this.resolve = this.reject = undefined;
    resolve(result);
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
