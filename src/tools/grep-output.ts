import { OutputCap } from "./output-cap.js";

/** Longer lines of content output are cut with a marker. */
export const GREP_MAX_LINE_CHARS = 1000;

/**
 * Collects Grep's output entries (lines of content, files, or counts) up to `head_limit` entries and
 * `maxBytes`; `full` tells the search it may stop.
 */
export class GrepOutput {
  private readonly cap: OutputCap;
  private entries = 0;
  /** Entries dropped because of head_limit. */
  limited = false;

  constructor(
    maxBytes: number,
    private readonly headLimit: number | undefined,
  ) {
    this.cap = new OutputCap(maxBytes);
  }

  get count(): number {
    return this.entries;
  }

  get full(): boolean {
    return this.limited || this.cap.truncated;
  }

  /** Appends one entry (a line of output); false once nothing more is taken. */
  add(entry: string): boolean {
    if (this.full) return false;
    if (this.headLimit !== undefined && this.entries >= this.headLimit) {
      this.limited = true;
      return false;
    }
    this.cap.push(this.entries === 0 ? entry : `\n${entry}`);
    this.entries++;
    return !this.cap.truncated;
  }

  /** The entries, then the truncation note or the head_limit note. */
  text(): string {
    let out = this.cap.text() + this.cap.note;
    if (this.limited) out += `\n(stopped at head_limit=${this.headLimit ?? 0} entries)`;
    return out;
  }

  get truncated(): boolean {
    return this.cap.truncated;
  }
}

/**
 * The output lines for one file's matches in content mode, ripgrep style: `path:N:text` for a
 * matching line, `path-N-text` for a context line, and, when there is context, `--` between groups that are not
 * adjacent.
 */
export function contentLines(
  path: string,
  lines: readonly string[],
  matches: readonly number[],
  before: number,
  after: number,
): string[] {
  const out: string[] = [];
  const isMatch = new Set(matches);
  const withContext = before > 0 || after > 0;
  let lastShown = 0;
  for (const m of matches) {
    const from = Math.max(1, m - before, lastShown + 1);
    const to = Math.min(lines.length, m + after);
    if (from > to) continue;
    if (withContext && lastShown > 0 && from > lastShown + 1) out.push("--");
    for (let n = from; n <= to; n++) {
      const sep = isMatch.has(n) ? ":" : "-";
      out.push(`${path}${sep}${n}${sep}${cutLine(lines[n - 1] ?? "")}`);
    }
    lastShown = to;
  }
  return out;
}

function cutLine(line: string): string {
  return line.length > GREP_MAX_LINE_CHARS
    ? `${line.slice(0, GREP_MAX_LINE_CHARS)}… [line truncated]`
    : line;
}
