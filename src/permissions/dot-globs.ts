import { hasWildcard } from "./glob-overlap.js";

/**
 * A path as the shell may expand it through `..`: with the segments whose wildcards can match
 * `..` (`.*`, `.?`, `.[.]`, `.[!a]`: a leading dot written, then anything that matches a dot) also
 * read as `..`, first one at a time, then all at once. Bash before 5.2 (without `globskipdots`)
 * and dash expand `.*` to `.` and `..` too, so `grep -r x .*` reads the parent directory. A
 * leading dot is matched only by a dot written (no `dotglob`): `*`, `?*` and `[.]*` never match
 * `..`. Without such a segment, `[path]`.
 */
export function dotGlobVariants(path: string): string[] {
  const segments = path.split("/");
  const parents = segments.flatMap((segment, i) => (mayMatchDotDot(segment) ? [i] : []));
  if (parents.length === 0) return [path];
  const variant = (replaced: readonly number[]) =>
    segments.map((segment, i) => (replaced.includes(i) ? ".." : segment)).join("/");
  const variants = parents.map((i) => variant([i]));
  if (parents.length > 1) variants.push(variant(parents));
  return [path, ...variants];
}

/** Whether a glob segment can match `..` when the shell expands it. */
export function mayMatchDotDot(segment: string): boolean {
  return hasWildcard(segment) && segmentPattern(segment).test("..");
}

const SPECIAL = /[\\^$.*+?()[\]{}|/-]/g;

/** A regular expression for one glob segment, as the shell matches names. */
function segmentPattern(segment: string): RegExp {
  let source = "^";
  let i = 0;
  while (i < segment.length) {
    const first = i === 0;
    const c = segment[i] as string;
    if (c === "\\" && i + 1 < segment.length) {
      source += (segment[i + 1] as string).replace(SPECIAL, "\\$&");
      i += 2;
    } else if (c === "*") {
      source += first ? "(?!\\.)[^/]*" : "[^/]*";
      i += 1;
    } else if (c === "?") {
      source += first ? "[^/.]" : "[^/]";
      i += 1;
    } else if (c === "[") {
      const end = bracketEnd(segment, i);
      if (end === undefined) {
        source += "\\[";
        i += 1;
      } else {
        source += (first ? "(?!\\.)" : "") + bracketClass(segment.slice(i + 1, end));
        i = end + 1;
      }
    } else {
      source += c.replace(SPECIAL, "\\$&");
      i += 1;
    }
  }
  return new RegExp(`${source}$`);
}

/** The index of the `]` closing the bracket expression opened at `open`, if any. */
function bracketEnd(segment: string, open: number): number | undefined {
  let i = open + 1;
  if (segment[i] === "!" || segment[i] === "^") i += 1;
  if (segment[i] === "]") i += 1; // a leading `]` is a member
  for (; i < segment.length; i += 1) {
    if (segment[i] === "[" && segment[i + 1] === ":") {
      const close = segment.indexOf(":]", i + 2);
      if (close !== -1) i = close + 1;
    } else if (segment[i] === "]") return i;
  }
  return undefined;
}

/**
 * A bracket expression's members as a character class. One with a named class (`[:alpha:]`) is
 * read as any character, which may match more than the shell would.
 */
function bracketClass(body: string): string {
  const negated = body.startsWith("!") || body.startsWith("^");
  const members = negated ? body.slice(1) : body;
  if (members.includes("[:")) return "[^/]";
  const escaped = members.replace(/[\\\]^[]/g, "\\$&");
  return negated ? `[^/${escaped}]` : `[${escaped}]`;
}
