import pc from "picocolors";

/** The colour functions the chat uses; identity functions when colour is off. */
export type Colors = ReturnType<typeof pc.createColors>;

/**
 * Colour is on only when the output is a terminal and picocolors allows it (it honours NO_COLOR,
 * FORCE_COLOR and `--no-color`); piped output never carries escape codes.
 */
export function colorsFor(isTTY: boolean): Colors {
  return pc.createColors(isTTY && pc.isColorSupported);
}

/** Marks used in the transcript. */
export const MARK = {
  tool: "⏺",
  result: "⎿",
  ok: "✓",
  fail: "✗",
  denied: "⊘",
  stop: "⏹",
  park: "⏸",
  warn: "⚠",
  thinking: "✻",
  pointer: "❯",
  checked: "◉",
  unchecked: "◯",
  external: "⚙",
} as const;

/** Visible width of `text`: ANSI escapes removed; every code point counts as one column. */
export function visibleLength(text: string): number {
  return Array.from(stripAnsi(text)).length;
}

/** `text` without ANSI escape sequences. */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, "");
}

/**
 * `text` cut to at most `width` visible columns, ending in "…" when cut; escape sequences are kept
 * (a reset closes any style left open).
 */
export function truncate(text: string, width: number): string {
  if (!Number.isFinite(width) || visibleLength(text) <= width) return text;
  let out = "";
  let seen = 0;
  // eslint-disable-next-line no-control-regex
  const parts = text.split(/(\u001b\[[0-9;?]*[ -/]*[@-~])/);
  for (const part of parts) {
    // eslint-disable-next-line no-control-regex
    if (/^\u001b\[/.test(part)) {
      out += part;
      continue;
    }
    for (const ch of Array.from(part)) {
      if (seen >= width - 1) return `${out}…${text.includes("\u001b[") ? "\u001b[0m" : ""}`;
      out += ch;
      seen++;
    }
  }
  return out;
}

// eslint-disable-next-line no-control-regex
const TOKENS = /(\u001b\[[0-9;?]*[ -/]*[@-~]| +)/;

/**
 * `text` broken into lines of at most `width` visible columns at spaces (a word longer than a line
 * is cut), continuation lines indented like the first; escape sequences are kept.
 */
export function wrap(text: string, width: number): string[] {
  if (!Number.isFinite(width) || visibleLength(text) <= width) return [text];
  const indent = " ".repeat(Math.min(/^ */.exec(stripAnsi(text))?.[0].length ?? 0, width >> 1));
  const lines: string[] = [];
  let line = "";
  let col = 0;
  const newLine = () => {
    lines.push(line.trimEnd());
    line = indent;
    col = indent.length;
  };
  for (const token of text.split(TOKENS)) {
    if (token === "") continue;
    if (token.startsWith("\u001b[")) {
      line += token;
      continue;
    }
    let chars = Array.from(token);
    if (token.startsWith(" ")) {
      if (col + chars.length >= width) newLine();
      else {
        line += token;
        col += chars.length;
      }
      continue;
    }
    if (col + chars.length > width && col > indent.length) newLine();
    while (col + chars.length > width) {
      const room = Math.max(1, width - col);
      line += chars.slice(0, room).join("");
      chars = chars.slice(room);
      newLine();
    }
    line += chars.join("");
    col += chars.length;
  }
  lines.push(line);
  return lines;
}
