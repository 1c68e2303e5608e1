/**
 * Word-wraps text that arrives in pieces: whole words are written as soon as the space after them
 * arrives, each moved to a new line when it would cross the right edge; the word still arriving is
 * held back until it is complete or `flush` is called. With an unbounded width (no terminal) the
 * text passes through unchanged and at once.
 */
export class StreamWrap {
  private held = "";
  private col = 0;

  constructor(
    private readonly width: () => number,
    private readonly emit: (text: string) => void,
    /** True when other output ended the line in between (the next word starts at column 0). */
    private readonly lineStart: () => boolean = () => false,
  ) {}

  /** Starts a new block whose first line already has `col` columns. */
  start(col = 0): void {
    this.held = "";
    this.col = col;
  }

  push(delta: string): void {
    const width = this.width();
    if (!Number.isFinite(width)) {
      this.emit(delta);
      return;
    }
    this.held += delta;
    const cut = Math.max(this.held.lastIndexOf(" "), this.held.lastIndexOf("\n"));
    if (cut < 0 && Array.from(this.held).length < width) return;
    const ready = cut < 0 ? this.held : this.held.slice(0, cut + 1);
    this.held = cut < 0 ? "" : this.held.slice(cut + 1);
    this.layout(ready, width);
  }

  /** Writes the word held back. */
  flush(): void {
    const rest = this.held;
    this.held = "";
    if (rest !== "") this.layout(rest, this.width());
  }

  private layout(text: string, width: number): void {
    if (this.lineStart()) this.col = 0;
    let out = "";
    for (const token of text.split(/(\n| +)/)) {
      if (token === "") continue;
      if (token === "\n") {
        out += "\n";
        this.col = 0;
        continue;
      }
      let chars = Array.from(token);
      if (token.startsWith(" ")) {
        if (this.col + chars.length >= width) {
          out += "\n";
          this.col = 0;
        } else {
          out += token;
          this.col += chars.length;
        }
        continue;
      }
      if (this.col + chars.length > width && this.col > 0) {
        out += "\n";
        this.col = 0;
      }
      while (this.col + chars.length > width) {
        const room = Math.max(1, width - this.col);
        out += `${chars.slice(0, room).join("")}\n`;
        chars = chars.slice(room);
        this.col = 0;
      }
      out += chars.join("");
      this.col += chars.length;
    }
    this.emit(out);
  }
}
