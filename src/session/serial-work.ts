/**
 * Work run one at a time, in the order given: each starts once the one before it has ended, and
 * at once when none is under way (not a turn of the event loop later). What a step throws is its
 * promise's rejection, as when it is called from `then`; work asked for while a step runs, even
 * from within it, waits for that step's end.
 */
export class SerialWork {
  /** Settles once the last step asked for has ended. */
  private last: Promise<void> = Promise.resolve();
  private pending = 0;

  run<T>(fn: () => Promise<T>): Promise<T> {
    const idle = this.pending++ === 0;
    const before = this.last;
    let ended!: () => void;
    this.last = new Promise<void>((resolve) => (ended = resolve));
    const next = idle ? runNow(fn) : before.then(fn, fn);
    const done = () => {
      this.pending -= 1;
      ended();
    };
    next.then(done, done);
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
