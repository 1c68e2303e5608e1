/**
 * A wake-up that is not lost: `notify` before `wait` makes the next `wait` return at once. `wait`
 * returns on the first notification or after `ms`, whichever comes first.
 */
export class Wakeup {
  private notified = false;
  private resolve: (() => void) | undefined;

  notify = (): void => {
    this.notified = true;
    this.resolve?.();
  };

  async wait(ms: number): Promise<void> {
    if (!this.notified) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        this.resolve = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.resolve = undefined;
    }
    this.notified = false;
  }
}
