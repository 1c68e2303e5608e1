/** Finds the lines of a text that a search pattern matches. */
export interface LineMatcher {
  /**
   * The 1-based numbers of the matching lines of `text`, ascending. Lines end at "\n" (the text is
   * expected without "\r\n"); a final "\n" does not start another line, and "" has no lines. With
   * `firstOnly`, stops at the first matching line.
   */
  matchLines(text: string, firstOnly: boolean): number[];
}

/** A lookahead or lookbehind: it can see across line ends, so a whole-text scan may miss a line. */
const LOOKAROUND = /\(\?<?[=!]/;

/**
 * A matcher for `pattern` (JavaScript syntax; throws SyntaxError when invalid).
 *
 * - Line mode: a line matches when the pattern matches the line on its own. Unless the pattern has
 *   lookaround, the whole text is scanned once for candidates (no per-line work on lines that cannot
 *   match) and each candidate's line is confirmed on its own, so the result is the per-line one.
 * - Multiline mode: the pattern runs over the whole text with `.` matching "\n", and every line a
 *   match spans counts.
 */
export function createLineMatcher(
  pattern: string,
  options: { ignoreCase: boolean; multiline: boolean },
): LineMatcher {
  const i = options.ignoreCase ? "i" : "";
  if (options.multiline) {
    const regex = new RegExp(pattern, `gms${i}`);
    return { matchLines: (text, firstOnly) => spannedLines(regex, text, firstOnly) };
  }
  const line = new RegExp(pattern, i);
  const scan = LOOKAROUND.test(pattern) ? null : new RegExp(pattern, `gm${i}`);
  return {
    matchLines: (text, firstOnly) =>
      scan === null ? eachLine(line, text, firstOnly) : candidates(scan, line, text, firstOnly),
  };
}

/** The last offset that belongs to a line: a final "\n" does not start another line. */
const contentEnd = (text: string) => (text.endsWith("\n") ? text.length - 1 : text.length);

function eachLine(line: RegExp, text: string, firstOnly: boolean): number[] {
  const out: number[] = [];
  const end = contentEnd(text);
  for (let start = 0, n = 1; start <= end && text !== ""; n++) {
    let stop = text.indexOf("\n", start);
    if (stop === -1) stop = text.length;
    if (line.test(text.slice(start, stop))) {
      out.push(n);
      if (firstOnly) break;
    }
    start = stop + 1;
  }
  return out;
}

function candidates(scan: RegExp, line: RegExp, text: string, firstOnly: boolean): number[] {
  const out: number[] = [];
  const end = contentEnd(text);
  const at = lineCursor(text);
  for (let pos = 0; pos <= end && text !== "";) {
    scan.lastIndex = pos;
    const m = scan.exec(text);
    if (m === null || m.index > end) break;
    const { n, start, stop } = at(m.index);
    if (line.test(text.slice(start, stop))) {
      out.push(n);
      if (firstOnly) break;
    }
    pos = stop + 1;
  }
  return out;
}

function spannedLines(regex: RegExp, text: string, firstOnly: boolean): number[] {
  const out: number[] = [];
  const end = contentEnd(text);
  if (text === "") return out;
  const at = lineCursor(text);
  regex.lastIndex = 0;
  for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
    if (m.index > end) break;
    const first = at(m.index).n;
    const last = at(Math.max(m.index, m.index + m[0].length - 1)).n;
    for (let n = Math.max(first, (out.at(-1) ?? 0) + 1); n <= last; n++) out.push(n);
    if (firstOnly) break;
    if (m[0].length === 0) regex.lastIndex++;
  }
  return out;
}

/** Locates offsets (non-decreasing between calls) by line: its number, start and end. */
function lineCursor(text: string): (offset: number) => { n: number; start: number; stop: number } {
  let n = 1;
  let start = 0;
  let stop = text.indexOf("\n");
  if (stop === -1) stop = text.length;
  return (offset) => {
    while (offset > stop && stop < text.length) {
      n++;
      start = stop + 1;
      stop = text.indexOf("\n", start);
      if (stop === -1) stop = text.length;
    }
    return { n, start, stop };
  };
}
