/**
 * The 1-based numbers of the lines of `lines` (a file split at "\n", each without its "\r") that
 * `regex` matches, ascending.
 *
 * - Line mode (`multiline` false): each line is tested on its own with a non-global regex.
 * - Multiline mode: `regex` must carry the "g" flag; it runs over `text` (the whole file) and every
 *   line a match spans counts as matching.
 *
 * With `firstOnly`, stops at the first matching line.
 */
export function matchLines(
  regex: RegExp,
  text: string,
  lines: readonly string[],
  multiline: boolean,
  firstOnly: boolean,
): number[] {
  const out: number[] = [];
  if (!multiline) {
    for (let i = 0; i < lines.length; i++) {
      if (regex.test(lines[i] ?? "")) {
        out.push(i + 1);
        if (firstOnly) break;
      }
    }
    return out;
  }
  regex.lastIndex = 0;
  let line = 1;
  let lineStart = 0;
  /** Advances `line` to the line containing offset `at` (offsets only grow). */
  const lineAt = (at: number) => {
    for (let nl = text.indexOf("\n", lineStart); nl !== -1 && nl < at;) {
      line++;
      lineStart = nl + 1;
      nl = text.indexOf("\n", lineStart);
    }
    return line;
  };
  for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
    const first = lineAt(m.index);
    const end = m.index + Math.max(0, m[0].length - 1);
    const last = lineAt(end);
    for (let n = Math.max(first, (out.at(-1) ?? 0) + 1); n <= last; n++) out.push(n);
    if (firstOnly) break;
    if (m[0].length === 0) regex.lastIndex++;
  }
  return out;
}
