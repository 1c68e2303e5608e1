import type { Dispatcher } from "undici";

/** What an aborted request, or the body of one aborted after its headers, throws. */
export function aborted(): Error {
  return new DOMException("the model request was aborted", "AbortError");
}

/** Bytes queued unread past which the connection's reads are paused until the reader catches up. */
const HIGH_WATER_BYTES = 64 * 1024;

/**
 * A streamed answer's body: the bytes of each read of the connection, queued as they come and
 * taken by one async iterator. `destroy` (and leaving the iteration early) ends the request.
 */
export class StreamedBody implements AsyncIterable<Uint8Array> {
  private readonly queued: Uint8Array[] = [];
  private queuedBytes = 0;
  private ended = false;
  private failed: Error | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly controller: Dispatcher.DispatchController) {}

  push(chunk: Uint8Array): void {
    this.queued.push(chunk);
    this.queuedBytes += chunk.byteLength;
    if (this.queuedBytes > HIGH_WATER_BYTES && !this.controller.paused) this.controller.pause();
    this.wakeReader();
  }

  end(): void {
    this.ended = true;
    this.wakeReader();
  }

  fail(err: Error): void {
    this.failed ??= err;
    this.wakeReader();
  }

  destroy(): void {
    this.fail(aborted());
    if (!this.controller.aborted) this.controller.abort(aborted());
  }

  private wakeReader(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private async next(): Promise<IteratorResult<Uint8Array>> {
    for (;;) {
      const chunk = this.queued.shift();
      if (chunk) {
        this.queuedBytes -= chunk.byteLength;
        if (this.controller.paused && this.queuedBytes <= HIGH_WATER_BYTES) {
          this.controller.resume();
        }
        return { value: chunk, done: false };
      }
      if (this.failed) throw this.failed;
      if (this.ended) return { value: undefined, done: true };
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return {
      next: () => this.next(),
      return: () => {
        if (!this.ended && !this.failed) this.destroy();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
