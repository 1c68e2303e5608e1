/** A key press, as node:readline decodes it. */
export interface Key {
  name?: string;
  ctrl?: boolean;
  meta?: boolean;
  shift?: boolean;
  sequence?: string;
}

/** Receives key presses. */
export type KeyHandler = (key: Key, text: string | undefined) => void;

/**
 * How a line read ended: a line; `cancel` (Escape where allowed, or the signal aborted); `interrupt`
 * (Ctrl-C on an empty line); `eof` (input closed, or Ctrl-D on an empty line).
 */
export type LineResult =
  { kind: "line"; text: string } | { kind: "cancel" } | { kind: "interrupt" } | { kind: "eof" };

export interface ReadLineOptions {
  /** Aborting it ends the read with `cancel`. */
  signal?: AbortSignal;
  /** Text placed in the line for the user to edit (terminal only). */
  prefill?: string;
  /** Earlier lines, newest first, reachable with ↑ (terminal only); not changed by the read. */
  history?: readonly string[];
  /** Escape cancels the read. */
  escapable?: boolean;
}

/**
 * Where the chat reads from. On a terminal (`keys` true) it reads single keys and edits lines;
 * otherwise it reads whole lines from a pipe and echoes each line it consumes to the transcript.
 */
export interface Input {
  /** True when single key presses are available (a terminal in raw mode). */
  readonly keys: boolean;
  /** Reads one line after showing `prompt`. */
  readLine(prompt: string, options?: ReadLineOptions): Promise<LineResult>;
  /** Routes key presses to `handler` until the returned function is called (terminal only). */
  capture(handler: KeyHandler): () => void;
  /** Receives the key presses that nothing captures (terminal only). */
  setBaseHandler(handler: KeyHandler): void;
  /** Hands a key press to the base handler from inside a capture (e.g. Ctrl-O in a prompt). */
  toBase(key: Key, text: string | undefined): void;
  /** Releases the input: the terminal leaves raw mode, the pipe is no longer read. */
  close(): void;
}

/** True for Ctrl-`letter`. */
export function isCtrl(key: Key, letter: string): boolean {
  return key.ctrl === true && key.name === letter;
}
