import picomatch from "picomatch/posix.js";

/**
 * Whether two absolute globs may match a common path: a conservative answer for a deny rule's
 * glob and a path a command names with wildcards (`cat secre?/key.txt`), which the shell expands only
 * when it runs. Segments are compared one by one; `**` spans any number of segments; a literal
 * segment is tested against a wildcard one; two wildcard segments are taken to overlap.
 */
export function globsMayOverlap(a: string, b: string): boolean {
  return overlap(a.split("/"), 0, b.split("/"), 0);
}

/** Whether a path segment or word holds a shell wildcard. */
export function hasWildcard(word: string): boolean {
  return /[*?[]/.test(word);
}

function overlap(a: readonly string[], i: number, b: readonly string[], j: number): boolean {
  if (i === a.length && j === b.length) return true;
  if (a[i] === "**") return overlap(a, i + 1, b, j) || (j < b.length && overlap(a, i, b, j + 1));
  if (b[j] === "**") return overlap(b, j, a, i);
  if (i === a.length || j === b.length) return false;
  return segmentsMayMatch(a[i] as string, b[j] as string) && overlap(a, i + 1, b, j + 1);
}

function segmentsMayMatch(x: string, y: string): boolean {
  const xWild = hasWildcard(x);
  const yWild = hasWildcard(y);
  if (xWild && yWild) return true;
  if (xWild) return picomatch(x, { dot: true })(y);
  if (yWild) return picomatch(y, { dot: true })(x);
  return x === y;
}
