/**
 * A timer for work kept in the store by due time (deadlines, notifications): armed for the
 * earliest time it is told of, it runs `fire` once at or after it, then waits to be told again.
 * Unreferenced: it never keeps the process alive.
 */
export class DueTimer {
  private timer: NodeJS.Timeout | undefined;
  private nextAt = Infinity;
  private stopped = false;

  constructor(private readonly fire: () => void) {}

  /** Makes sure `fire` runs no later than `at` (an ISO time). */
  note(at: string): void {
    const when = Date.parse(at);
    if (this.stopped || !(when < this.nextAt)) return;
    this.nextAt = when;
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.nextAt = Infinity;
        this.timer = undefined;
        this.fire();
      },
      Math.max(0, when - Date.now()),
    );
    this.timer.unref();
  }

  /** Fires no more. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
