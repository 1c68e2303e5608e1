import { createInterface, emitKeypressEvents } from "node:readline";
import { type Input, isCtrl, type Key, type KeyHandler, type LineResult } from "./input.js";
import type { ReadLineOptions } from "./input.js";
import type { Screen } from "./screen.js";

/** True when `text` has no control characters. */
function isPrintable(text: string): boolean {
  return Array.from(text).every((ch) => ch >= " " && ch !== "\u007f");
}

/**
 * Terminal input: stdin in raw mode, key presses routed to the newest capture (else the base
 * handler), and lines read with node:readline's editor (history, cursor keys, Ctrl-U/W/A/E).
 * Text typed while nothing captures keys (a reply is running) is kept for the next line read; an
 * Enter typed with it submits that line as soon as it is read.
 */
export class TtyInput implements Input {
  readonly keys = true;
  private readonly handlers: KeyHandler[] = [];
  private base: KeyHandler | undefined;
  /** Keys typed while nothing reads them (text, backspace, Enter as "\r"); the next line reads start with them. */
  private typeahead = "";
  private readonly onKeypress = (text: string | undefined, key: Key | undefined) => {
    const handler = this.handlers.at(-1);
    if (handler) return handler(key ?? { sequence: text }, text);
    if (key?.name === "backspace") this.typeahead = this.typeahead.slice(0, -1);
    else if (key?.name === "return" || key?.name === "enter") this.typeahead += "\r";
    else if (text && !key?.ctrl && !key?.meta && isPrintable(text)) {
      this.typeahead += text;
    } else this.base?.(key ?? { sequence: text }, text);
  };

  constructor(
    private readonly stdin: NodeJS.ReadStream,
    private readonly stdout: NodeJS.WriteStream,
    private readonly screen: Screen,
  ) {
    emitKeypressEvents(stdin);
    stdin.on("keypress", this.onKeypress);
    this.raw();
  }

  private raw(): void {
    this.stdin.setRawMode(true);
    this.stdin.resume();
  }

  capture(handler: KeyHandler): () => void {
    this.handlers.push(handler);
    return () => {
      const at = this.handlers.lastIndexOf(handler);
      if (at >= 0) this.handlers.splice(at, 1);
    };
  }

  setBaseHandler(handler: KeyHandler): void {
    this.base = handler;
  }

  toBase(key: Key, text: string | undefined): void {
    this.base?.(key, text);
  }

  readLine(prompt: string, options: ReadLineOptions = {}): Promise<LineResult> {
    return new Promise((resolve) => {
      this.screen.endLine();
      const history = options.history ? [...options.history] : [];
      const rl = createInterface({
        input: this.stdin,
        output: this.stdout,
        terminal: true,
        prompt,
        history,
        historySize: history.length + 1,
      });
      let done = false;
      const finish = (result: LineResult) => {
        if (done) return;
        done = true;
        options.signal?.removeEventListener("abort", onAbort);
        release();
        this.screen.setEditor(undefined);
        if (result.kind !== "line") this.stdout.write("\r\u001b[J");
        rl.close();
        this.raw();
        resolve(result);
      };
      const onAbort = () => finish({ kind: "cancel" });
      // The editor reads keys itself; Escape and Ctrl-O are the chat's.
      const release = this.capture((key, text) => {
        if (key.name === "escape" && options.escapable) finish({ kind: "cancel" });
        else if (isCtrl(key, "o")) this.toBase(key, text);
      });
      rl.on("line", (text) => finish({ kind: "line", text }));
      rl.on("close", () => finish({ kind: "eof" }));
      rl.on("SIGINT", () => {
        if (rl.line.length === 0) return finish({ kind: "interrupt" });
        rl.write(null, { ctrl: true, name: "e" });
        rl.write(null, { ctrl: true, name: "u" });
      });
      this.screen.setEditor({
        clear: () => this.stdout.write("\r\u001b[J"),
        redraw: () => rl.prompt(true),
      });
      rl.prompt();
      if (options.prefill !== undefined) rl.write(options.prefill);
      else if (this.typeahead) {
        // Typed ahead: the text up to the first Enter, submitted if Enter was typed too.
        const enter = this.typeahead.indexOf("\r");
        const text = enter < 0 ? this.typeahead : this.typeahead.slice(0, enter);
        this.typeahead = enter < 0 ? "" : this.typeahead.slice(enter + 1);
        rl.write(text);
        if (enter >= 0) rl.write("\r");
      }
      if (options.signal?.aborted) onAbort();
      else options.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  close(): void {
    this.stdin.off("keypress", this.onKeypress);
    if (this.stdin.isTTY) this.stdin.setRawMode(false);
    this.stdin.pause();
  }
}
