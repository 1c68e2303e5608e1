import type { Screen } from "./screen.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * A one-line spinner in the screen's live region while the agent works, with a label and the
 * seconds elapsed. Shown only on a terminal and only between transcript lines; `stop` removes it.
 */
export class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private label = "";
  private startedAt = 0;
  private readonly render = (): string[] => {
    const c = this.screen.c;
    const seconds = Math.floor((Date.now() - this.startedAt) / 1000);
    return [
      `${c.cyan(FRAMES[this.frame % FRAMES.length])} ${this.label} ${c.dim(`${seconds}s · ctrl-c to interrupt`)}`,
    ];
  };

  constructor(private readonly screen: Screen) {}

  /**
   * Shows the spinner with `label`, or changes the label of the one shown. A live region that is
   * not the spinner's (an open prompt) keeps the screen.
   */
  start(label: string): void {
    if (!this.screen.tty) return;
    this.label = label;
    const mine = this.screen.isLive(this.render);
    if (this.screen.hasLive() && !mine) return;
    if (this.timer) {
      if (mine) this.screen.refresh();
      else this.screen.setLive(this.render);
      return;
    }
    this.startedAt = Date.now();
    this.screen.setLive(this.render);
    this.timer = setInterval(() => {
      this.frame++;
      if (this.screen.isLive(this.render)) this.screen.refresh();
    }, 80);
    this.timer.unref();
  }

  /** Removes the spinner. */
  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.screen.isLive(this.render)) this.screen.setLive(undefined);
  }
}
