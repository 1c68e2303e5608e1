/**
 * Wildcard matching without backtracking regular expressions. A pattern such as `*a*a*a*a*b`
 * turned into a regular expression takes time exponential in its stars on a long name (a name of
 * 200 `a`s: past a minute), and the permission check runs on the server's event loop, on words a
 * model wrote and rules a client stored. These matchers take at most the text's length times the
 * pattern's.
 */

/** One element of a wildcard pattern: any run of characters, or one character that `test` takes. */
export type WildcardToken = { star: true } | { star: false; test: (c: string) => boolean };

/** A token for one literal character. */
export const literal = (char: string): WildcardToken => ({ star: false, test: (c) => c === char });

/** A token for any one character. */
export const anyChar: WildcardToken = { star: false, test: () => true };

/** A token for any run of characters. */
export const star: WildcardToken = { star: true };

/**
 * Whether `tokens` match the whole of `text` (UTF-16 code units, as a regular expression without
 * the `u` flag takes them). A failure after a star resumes from that star, one character further:
 * the last star is the only one ever moved back, so the work is at most |text| × |tokens|.
 */
export function matchTokens(tokens: readonly WildcardToken[], text: string): boolean {
  let t = 0;
  let s = 0;
  let starAt = -1;
  let starFrom = 0;
  while (s < text.length) {
    const token = tokens[t];
    if (token !== undefined && token.star) {
      starAt = t;
      starFrom = s;
      t += 1;
    } else if (token !== undefined && token.test(text[s] as string)) {
      t += 1;
      s += 1;
    } else if (starAt >= 0) {
      t = starAt + 1;
      starFrom += 1;
      s = starFrom;
    } else {
      return false;
    }
  }
  while (tokens[t]?.star === true) t += 1;
  return t === tokens.length;
}

/**
 * Whether `text` is `parts` joined by any runs of characters (a pattern whose only wildcard is
 * `*`, split at its stars): the first part a prefix, the last a suffix, each one between found
 * after the one before it, leftmost (which leaves the most room to the rest).
 */
export function matchesStarParts(parts: readonly string[], text: string): boolean {
  const first = parts[0] ?? "";
  if (parts.length === 1) return text === first;
  const last = parts[parts.length - 1] ?? "";
  if (text.length < first.length + last.length) return false;
  if (!text.startsWith(first) || !text.endsWith(last)) return false;
  const end = text.length - last.length;
  let at = first.length;
  for (let k = 1; k < parts.length - 1; k += 1) {
    const part = parts[k] as string;
    const found = text.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}
