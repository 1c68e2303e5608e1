import picomatch from "picomatch/posix.js";

/**
 * Whether two absolute globs may match a common path: a conservative answer for a deny rule's
 * glob and a path a command names with wildcards (`cat secre?/key.txt`), which the shell expands only
 * when it runs. Segments are compared one by one; `**` spans any number of segments; a literal
 * segment is tested against a wildcard one; two wildcard segments are taken to overlap.
 */
export function globsMayOverlap(a: string, b: string): boolean {
  const left = collapsed(a.split("/"));
  const right = collapsed(b.split("/"));
  // Each (i, j) once: `**` on both sides would otherwise try every split, exponentially.
  const known = new Map<number, boolean>();
  const overlap = (i: number, j: number): boolean => {
    const key = i * (right.length + 1) + j;
    const seen = known.get(key);
    if (seen !== undefined) return seen;
    let result: boolean;
    if (i === left.length && j === right.length) result = true;
    else if (left[i] === "**")
      result = overlap(i + 1, j) || (j < right.length && overlap(i, j + 1));
    else if (right[j] === "**")
      result = overlap(i, j + 1) || (i < left.length && overlap(i + 1, j));
    else if (i === left.length || j === right.length) result = false;
    else result = segmentsMayMatch(left[i] as string, right[j] as string) && overlap(i + 1, j + 1);
    known.set(key, result);
    return result;
  };
  return overlap(0, 0);
}

/** Segments with each run of `**` as one (`a/**\/**\/b` is `a/**\/b`). */
function collapsed(segments: readonly string[]): string[] {
  return segments.filter((segment, k) => !(segment === "**" && segments[k - 1] === "**"));
}

/** Whether a path segment or word holds a shell wildcard. */
export function hasWildcard(word: string): boolean {
  return /[*?[]/.test(word);
}

function segmentsMayMatch(x: string, y: string): boolean {
  const xWild = hasWildcard(x);
  const yWild = hasWildcard(y);
  if (xWild && yWild) return true;
  if (xWild) return matcher(x)(y);
  if (yWild) return matcher(y)(x);
  return x === y;
}

const matchers = new Map<string, (name: string) => boolean>();

/** A segment's compiled matcher, kept for the next decision (at most 256 kept). */
function matcher(pattern: string): (name: string) => boolean {
  let match = matchers.get(pattern);
  if (match === undefined) {
    if (matchers.size >= 256) matchers.clear();
    match = picomatch(pattern, { dot: true, noextglob: true });
    matchers.set(pattern, match);
  }
  return match;
}
