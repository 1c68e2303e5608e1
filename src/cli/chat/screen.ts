import { type Colors, colorsFor, wrap } from "./style.js";

/** A line editor that owns the bottom line while it reads: cleared before output, redrawn after. */
export interface Editor {
  clear(): void;
  redraw(): void;
}

const CLEAR_DOWN = "\u001b[J";
const HIDE_CURSOR = "\u001b[?25l";
const SHOW_CURSOR = "\u001b[?25h";

/**
 * The chat's output: a transcript that only grows, and on a terminal a live region below it (the
 * spinner or an open prompt) that is erased and redrawn around every transcript write. Without a
 * terminal there is no live region, no cursor movement and no colour: the output is plain text.
 */
export class Screen {
  readonly tty: boolean;
  readonly c: Colors;
  private live: (() => string[]) | undefined;
  private liveLines = 0;
  private atLineStart = true;
  private editor: Editor | undefined;
  private cursorHidden = false;

  constructor(private readonly out: NodeJS.WriteStream) {
    this.tty = out.isTTY === true;
    this.c = colorsFor(this.tty);
  }

  /** Columns available; unbounded when the output is not a terminal. */
  get width(): number {
    return this.tty ? Math.max(20, this.out.columns ?? 80) : Number.POSITIVE_INFINITY;
  }

  /** True when the transcript's next character starts a line. */
  get lineStart(): boolean {
    return this.atLineStart;
  }

  /** Appends text to the transcript as it is (streamed text may end mid-line). */
  write(text: string): void {
    if (text === "") return;
    this.around(() => this.raw(text));
  }

  /**
   * Appends whole lines to the transcript, starting on a fresh line. On a terminal a line wider
   * than it wraps at word boundaries, continuing under the line's own indentation.
   */
  line(...lines: string[]): void {
    const width = this.width - 1;
    this.around(() => {
      if (!this.atLineStart) this.raw("\n");
      this.raw(
        lines
          .flatMap((l) => wrap(l, width))
          .map((l) => `${l}\n`)
          .join(""),
      );
    });
  }

  /** Ends the current transcript line if the cursor is in the middle of one. */
  endLine(): void {
    if (!this.atLineStart) this.write("\n");
  }

  /** Shows `render`'s lines below the transcript until replaced (terminal only). */
  setLive(render: (() => string[]) | undefined): void {
    this.clearLive();
    this.live = render;
    this.drawLive();
  }

  /** True while some live region is set (drawn or not). */
  hasLive(): boolean {
    return this.live !== undefined;
  }

  /** True while `render` is the live region. */
  isLive(render: () => string[]): boolean {
    return this.live === render;
  }

  /** Redraws the live region after its content changed. */
  refresh(): void {
    this.clearLive();
    this.drawLive();
  }

  /** Registers the line editor that currently owns the bottom line, or none. */
  setEditor(editor: Editor | undefined): void {
    this.editor = editor;
    if (editor) this.atLineStart = true;
  }

  /** Leaves the terminal as it was found: live region erased, cursor shown. */
  restore(): void {
    this.setLive(undefined);
    this.endLine();
    if (this.cursorHidden) this.out.write(SHOW_CURSOR);
    this.cursorHidden = false;
  }

  private around(write: () => void): void {
    if (this.editor) {
      this.editor.clear();
      write();
      if (!this.atLineStart) this.raw("\n");
      this.editor.redraw();
      return;
    }
    this.clearLive();
    write();
    this.drawLive();
  }

  private raw(text: string): void {
    this.out.write(text);
    this.atLineStart = text.endsWith("\n");
  }

  private clearLive(): void {
    if (this.liveLines === 0) return;
    this.out.write(`\r${this.liveLines > 1 ? `\u001b[${this.liveLines - 1}A` : ""}${CLEAR_DOWN}`);
    this.liveLines = 0;
  }

  private drawLive(): void {
    if (!this.tty || !this.live || !this.atLineStart || this.editor) {
      this.cursor(true);
      return;
    }
    const rows = Math.max(3, (this.out.rows ?? 24) - 1);
    // Taller than the terminal: the bottom (the choices) stays in view.
    const lines = this.live()
      .flatMap((l) => wrap(l, this.width - 1))
      .slice(-rows);
    if (lines.length === 0) {
      this.cursor(true);
      return;
    }
    this.cursor(false);
    this.out.write(lines.join("\n"));
    this.liveLines = lines.length;
  }

  private cursor(visible: boolean): void {
    if (!this.tty || visible !== this.cursorHidden) return;
    this.out.write(visible ? SHOW_CURSOR : HIDE_CURSOR);
    this.cursorHidden = !visible;
  }
}
