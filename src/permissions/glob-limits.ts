/**
 * How complex a glob the server matches may be. Globs become regular expressions (picomatch), and
 * some take time exponential in their wildcards on a long name: `*a*a*a*b` against a name of 255
 * `a`s takes a second, `+(a|aa)b` past a minute, on the server's event loop. A rule's glob and a
 * Glob or Grep call's pattern are held to what matches any path (up to PATH_MAX) within
 * milliseconds: at most MAX_STARS_PER_SEGMENT `*` in one path segment, MAX_WILDCARDS `*` and `**`
 * in all, and no extglob.
 */

/** The most `*` (or runs of them) in one segment of a glob. */
export const MAX_STARS_PER_SEGMENT = 2;

/** The most `*` and `**` in a whole glob. */
export const MAX_WILDCARDS = 3;

/** Why `pattern` is too complex a glob to match, or undefined. */
export function globTooComplex(pattern: string): string | undefined {
  let wildcards = 0;
  for (const segment of segments(pattern)) {
    if (segment.extglob) {
      return `holds an extglob (${segment.extglob}…), which is not supported`;
    }
    if (segment.text !== "**" && segment.stars > MAX_STARS_PER_SEGMENT) {
      return `has ${segment.stars} wildcards * in the segment ${JSON.stringify(segment.text)}; at most ${MAX_STARS_PER_SEGMENT} in one segment`;
    }
    wildcards += segment.stars;
  }
  if (wildcards > MAX_WILDCARDS) {
    return `has ${wildcards} wildcards * and **; at most ${MAX_WILDCARDS} in one glob`;
  }
  return undefined;
}

interface Segment {
  text: string;
  /** Runs of unescaped `*`. */
  stars: number;
  /** The first extglob opening (`+(`), if any. */
  extglob?: string;
}

/** The glob's `/`-separated segments, with their unescaped stars and extglobs. */
function segments(pattern: string): Segment[] {
  const out: Segment[] = [];
  let current: Segment = { text: "", stars: 0 };
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i] as string;
    if (c === "\\" && i + 1 < pattern.length) {
      current.text += c + (pattern[i + 1] as string);
      i += 1;
      continue;
    }
    if (c === "/") {
      out.push(current);
      current = { text: "", stars: 0 };
      continue;
    }
    if ("@*+?!".includes(c) && pattern[i + 1] === "(" && current.extglob === undefined) {
      current.extglob = `${c}(`;
    }
    if (c === "*" && pattern[i - 1] !== "*") current.stars += 1;
    current.text += c;
  }
  out.push(current);
  return out;
}
