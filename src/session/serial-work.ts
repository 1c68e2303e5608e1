/**
 * Work run one at a time, in the order given: each starts once the one before it has ended, and
 * at once when none is under way (not a turn of the event loop later). What a step throws is its
 * promise's rejection, as when it is called from `then`.
 */
export class SerialWork {
  private last: Promise<unknown> = Promise.resolve();
  private pending = 0;
  private readonly ended = () => void (this.pending -= 1);

  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.pending++ === 0 ? runNow(fn) : this.last.then(fn, fn);
    this.last = next.then(this.ended, this.ended);
    return next;
  }
}

function runNow<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return fn();
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}
