import { createInterface, type Interface } from "node:readline";
import type { Input, Key, KeyHandler, LineResult, ReadLineOptions } from "./input.js";
import type { Screen } from "./screen.js";

/**
 * Input from a pipe or file: whole lines, consumed one per question in order. Each consumed line is
 * echoed after its prompt, so the transcript reads like the terminal session would. There are no
 * key presses; Ctrl-C arrives as SIGINT.
 */
export class LineInput implements Input {
  readonly keys = false;
  private readonly lines: string[] = [];
  private ended = false;
  private wake: (() => void) | undefined;
  private readonly rl: Interface;

  constructor(
    stdin: NodeJS.ReadStream,
    private readonly screen: Screen,
  ) {
    this.rl = createInterface({ input: stdin, terminal: false });
    this.rl.on("line", (line) => {
      this.lines.push(line);
      this.notify();
    });
    this.rl.on("close", () => {
      this.ended = true;
      this.notify();
    });
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  capture(_handler: KeyHandler): () => void {
    return () => {};
  }

  setBaseHandler(_handler: KeyHandler): void {}

  toBase(_key: Key, _text: string | undefined): void {}

  async readLine(prompt: string, options: ReadLineOptions = {}): Promise<LineResult> {
    this.screen.endLine();
    this.screen.write(prompt);
    for (;;) {
      const line = this.lines.shift();
      if (line !== undefined) {
        this.screen.write(`${line}\n`);
        return { kind: "line", text: line };
      }
      if (this.ended) {
        this.screen.write("\n");
        return { kind: "eof" };
      }
      if (options.signal?.aborted) {
        this.screen.write("\n");
        return { kind: "cancel" };
      }
      await new Promise<void>((resolve) => {
        const onAbort = () => resolve();
        this.wake = () => {
          options.signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        options.signal?.addEventListener("abort", onAbort, { once: true });
      });
    }
  }

  close(): void {
    this.rl.close();
  }
}
