/**
 * The lives of a server that is restarted: drivers wait for the current life to open, and after a
 * failure for the next one; the harness closes a life while it restarts and checks the server.
 */
export class Lives {
  private life = 0;
  private isOpen = false;
  private stopped = false;
  private waiters: (() => void)[] = [];

  /** Resolves with the life's number once it is open (at once after `stop`). */
  async ready(): Promise<number> {
    while (!this.isOpen && !this.stopped) await new Promise<void>((r) => this.waiters.push(r));
    return this.life;
  }

  /** Waits for a life later than `life` to open (or `stop`). */
  async after(life: number): Promise<void> {
    while ((this.life <= life || !this.isOpen) && !this.stopped) {
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  /** Opens the next life. */
  open(): void {
    this.life++;
    this.isOpen = true;
    this.wake();
  }

  /** Holds drivers before their next input. */
  close(): void {
    this.isOpen = false;
  }

  /** Lets every waiter go for good. */
  stop(): void {
    this.stopped = true;
    this.wake();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}
