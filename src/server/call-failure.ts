/**
 * What `ctx.fail` sets on a call: the error the call ends with, and a wake-up for its writer while
 * that waits for the client to read (a plain object: every attached stream holds one).
 */
export class CallFailure {
  error: Error | undefined;
  private wake: ((error: Error) => void) | undefined;

  /** Records the first failure and wakes a writer waiting in `drained`. */
  fail(error: Error): void {
    if (this.error) return;
    this.error = error;
    this.wake?.(error);
  }

  throwIfFailed(): void {
    if (this.error) throw this.error;
  }

  /**
   * Resolves when `call` drains (the client read what was written); rejects with the failure as
   * soon as `fail` is called (a stream that gave up on a client that stopped reading ends at once,
   * not when the client reads again), or with `signal`'s reason when it aborts.
   */
  drained(call: NodeJS.EventEmitter, signal: AbortSignal): Promise<void> {
    this.throwIfFailed();
    signal.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const finish = (error?: Error) => {
        call.off("drain", onDrain);
        signal.removeEventListener("abort", onAbort);
        this.wake = undefined;
        if (error === undefined) resolve();
        else reject(error);
      };
      const onDrain = () => finish();
      const onAbort = () =>
        finish(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
      this.wake = finish;
      call.once("drain", onDrain);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}
