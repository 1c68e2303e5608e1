/** An unbounded single-consumer queue that ends, or fails, once. */
export class AsyncQueue<T> {
  private readonly items: T[] = [];
  private wake: (() => void) | undefined;
  private end: { error?: Error } | undefined;

  push(item: T): void {
    if (this.end) return;
    this.items.push(item);
    this.notify();
  }

  close(error?: Error): void {
    if (this.end) return;
    this.end = error === undefined ? {} : { error };
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** The next item, or undefined once closed and drained; rejects with the close error. */
  async next(signal?: AbortSignal): Promise<T | undefined> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) return item;
      if (this.end) {
        if (this.end.error !== undefined) throw this.end.error;
        return undefined;
      }
      signal?.throwIfAborted();
      await new Promise<void>((resolve) => {
        const onAbort = () => resolve();
        this.wake = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    }
  }
}
