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
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const queue: T[] = [];
      let ended = false;
      let failure: unknown;
      let wake: (() => void) | undefined;
      const notify = () => {
        const w = wake;
        wake = undefined;
        w?.();
      };
      const onData = (msg: T) => {
        queue.push(msg);
        if (queue.length >= highWaterMark) stream.pause();
        notify();
      };
      const onEnd = () => {
        ended = true;
        notify();
      };
      const onError = (err: unknown) => {
        failure = err;
        ended = true;
        notify();
      };
      const cleanup = () => {
        stream.off("data", onData);
        stream.off("end", onEnd);
        stream.off("error", onError);
        signal.removeEventListener("abort", onEnd);
      };
      stream.on("data", onData);
      stream.on("end", onEnd);
      stream.on("error", onError);
      signal.addEventListener("abort", onEnd, { once: true });
      if (signal.aborted) ended = true;

      return {
        async next(): Promise<IteratorResult<T>> {
          for (;;) {
            const msg = queue.shift();
            if (msg !== undefined) {
              if (queue.length < highWaterMark / 2 && stream.isPaused()) stream.resume();
              return { value: msg, done: false };
            }
            if (ended) {
              cleanup();
              if (failure !== undefined && !signal.aborted) {
                throw failure instanceof Error
                  ? failure
                  : new Error("stream failed", { cause: failure });
              }
              return { value: undefined, done: true };
            }
            await new Promise<void>((resolve) => (wake = resolve));
          }
        },
        return(): Promise<IteratorResult<T>> {
          ended = true;
          cleanup();
          return Promise.resolve({ value: undefined, done: true });
        },
      };
    },
  };
}
