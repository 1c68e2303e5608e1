import { unfolded } from "./resolve-path.js";
import type { PathContext } from "./types.js";
import { anyChar, literal, matchTokens, star, type WildcardToken } from "./wildcard-match.js";

/**
 * What a wildcard word names on disk, as bash expands it by default (no dotglob, no globstar, no
 * extglob): `*`, `?` and `[…]` match within one path segment, and a name that starts with `.` only
 * when its segment's pattern does. A program is handed the matches, and follows the links among
 * them: `cat lin*` reads where `link` leads. The check judges each match as a path of its own.
 */

/** The most paths a wildcard word may match for the check to judge them one by one. */
export const MAX_GLOB_MATCHES = 1000;

/**
 * The paths `written` matches from `cwd`, absolute: [] when it has no wildcard, nothing matches or
 * the context cannot list directories; undefined past MAX_GLOB_MATCHES.
 */
export function globMatches(
  written: string,
  context: PathContext,
  cwd: string | undefined,
): string[] | undefined {
  if (context.listDirectory === undefined || !hasGlob(written)) return [];
  return expandGlob(unfolded(written, context, cwd), context.listDirectory, MAX_GLOB_MATCHES);
}

/** Whether `word` has a wildcard bash may expand. */
export function hasGlob(word: string): boolean {
  return /[*?[]/.test(word);
}

/**
 * The paths the absolute `path` matches, listing directories with `list`; [] when it has no
 * wildcard or nothing matches (bash then passes the word as written), undefined past `limit`.
 */
export function expandGlob(
  path: string,
  list: (dir: string) => readonly string[] | undefined,
  limit: number,
): string[] | undefined {
  if (!hasGlob(path)) return [];
  let prefixes = [""];
  let globbed = false;
  for (const segment of path.split("/").slice(1)) {
    if (!hasGlob(segment)) {
      // After a wildcard, bash keeps only the matches that exist.
      const kept = globbed
        ? prefixes.filter((prefix) => {
            const names = list(prefix === "" ? "/" : prefix);
            return names !== undefined && (/^\.{0,2}$/.test(segment) || names.includes(segment));
          })
        : prefixes;
      if (kept.length === 0) return [];
      prefixes = kept.map((prefix) => `${prefix}/${segment}`);
      continue;
    }
    globbed = true;
    const pattern = segmentPattern(segment);
    const next: string[] = [];
    for (const prefix of prefixes) {
      for (const name of list(prefix === "" ? "/" : prefix) ?? []) {
        if (name.startsWith(".") && !segment.startsWith(".")) continue;
        if (!matchTokens(pattern, name)) continue;
        next.push(`${prefix}/${name}`);
        if (next.length > limit) return undefined;
      }
    }
    if (next.length === 0) return [];
    prefixes = next;
  }
  return prefixes;
}

/** One segment's pattern as wildcard tokens over a whole name (see `matchTokens`). */
function segmentPattern(segment: string): WildcardToken[] {
  const tokens: WildcardToken[] = [];
  for (let i = 0; i < segment.length; i += 1) {
    const c = segment[i] as string;
    if (c === "*") tokens.push(star);
    else if (c === "?") tokens.push(anyChar);
    else if (c === "[") {
      const end = bracketEnd(segment, i);
      if (end === -1) tokens.push(literal("["));
      else {
        const member = bracketMember(segment.slice(i + 1, end));
        // A range bash reads but JavaScript refuses (`[z-a]`): taken as matching every name.
        if (member === undefined) return [star];
        tokens.push(member);
        i = end;
      }
    } else tokens.push(literal(c));
  }
  return tokens;
}

/** The index of the `]` that closes the bracket expression opened at `start`, or -1. */
function bracketEnd(segment: string, start: number): number {
  let i = start + 1;
  if (segment[i] === "!" || segment[i] === "^") i += 1;
  if (segment[i] === "]") i += 1;
  for (; i < segment.length; i += 1) {
    const kind = segment[i + 1] ?? "";
    if (segment[i] === "[" && (kind === ":" || kind === "." || kind === "=")) {
      const close = segment.indexOf(`${kind}]`, i + 2);
      if (close !== -1) i = close + 1;
    } else if (segment[i] === "]") return i;
  }
  return -1;
}

/**
 * A bracket expression's body (`!a-z`) as a token for one character, or undefined when JavaScript
 * refuses it as a character class. One with a character class, a collating symbol or an
 * equivalence class (`[:digit:]`, `[.k.]`, `[=k=]`) is taken as any character: more matches,
 * never fewer.
 */
function bracketMember(body: string): WildcardToken | undefined {
  if (/\[[:.=]/.test(body)) return anyChar;
  const negated = body.startsWith("!") || body.startsWith("^");
  const inner = (negated ? body.slice(1) : body).replace(/[\\\]^[]/g, "\\$&");
  try {
    const member = new RegExp(`^[${negated ? "^" : ""}${inner}]$`, "s");
    return { star: false, test: (c) => member.test(c) };
  } catch {
    return undefined;
  }
}
