import { globMatches, hasGlob } from "./expand-glob.js";
import type { ShellWord } from "./parse-shell.js";
import { unfolded } from "./resolve-path.js";
import { MAX_BRACE_EXPANSION, expandBraces } from "./shell-command.js";
import type { PathContext } from "./types.js";

/**
 * The words bash hands a program: each word's unquoted braces expanded (`-n {1,/x}` is two
 * words), then its unquoted wildcards matched on disk (`grep -v g/*` is `grep -v g/1 g/2`), the
 * matches written as the word was (relative stays relative, so a file named `--pre=x` is an option
 * again). Options are parsed only after this, as the program parses them. A word that mixes
 * quoting with braces or wildcards is not followed: which of its characters expand is not
 * tracked here.
 */
export type Expanded =
  | {
      ok: true;
      words: string[];
      /** The words that wildcards matched: the program sees these names, whatever it does. */
      matched: string[];
      /**
       * The directories bash lists to match each wildcard word, matched or not: the one above its
       * first segment with a wildcard (`/e?c/passwd` lists `/`, `src/*.ts` lists `src`).
       */
      listed: string[];
    }
  | { ok: false; reason: string };

export function expandWords(
  words: readonly ShellWord[],
  context: PathContext,
  cwd: string | undefined,
): Expanded {
  const out: string[] = [];
  const matched: string[] = [];
  const listed: string[] = [];
  for (const word of words) {
    const quoted = word.raw !== word.value;
    const braces = /\{[^{}]*(,|\.\.)[^{}]*\}/.test(word.value) && hasUnquoted(word.raw, "{");
    const glob = hasGlob(word.value) && hasUnquoted(word.raw, "*?[");
    if (quoted && (braces || glob)) {
      return {
        ok: false,
        reason: `${word.raw} mixes quoting with ${braces ? "braces" : "wildcards"}`,
      };
    }
    if (braces && /\{(-?\d+|[^{}])\.\.(-?\d+|[^{}])(\.\.-?\d+)?\}/.test(word.value)) {
      return { ok: false, reason: `${word.raw} holds a brace sequence` };
    }
    const pieces = braces ? expandBraces(word.value) : [word.value];
    if (pieces.length > MAX_BRACE_EXPANSION) {
      return { ok: false, reason: `${word.raw} expands to too many words` };
    }
    for (const piece of pieces) {
      if (glob && hasGlob(piece)) listed.push(listedDirectory(piece));
      const matches = glob ? globMatches(piece, context, cwd) : [];
      if (matches === undefined) return { ok: false, reason: `${piece} matches too many paths` };
      if (matches.length === 0) out.push(piece);
      else {
        const written = matches.map((match) => asWritten(match, piece, context, cwd));
        out.push(...written);
        matched.push(...written);
      }
    }
  }
  return { ok: true, words: out, matched, listed };
}

/** The directory above the first segment of `pattern` that holds a wildcard. */
function listedDirectory(pattern: string): string {
  const segments = pattern.split("/");
  const first = segments.findIndex(hasGlob);
  if (first === 0) return ".";
  const above = segments.slice(0, first).join("/");
  return above === "" ? "/" : above;
}

/** Whether `raw` has one of `chars` outside quotes and not escaped. */
function hasUnquoted(raw: string, chars: string): boolean {
  let quote: string | undefined;
  for (let i = 0; i < raw.length; i += 1) {
    const c = raw[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
    } else if (c === "\\") i += 1;
    else if (quote === '"') {
      if (c === '"') quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (chars.includes(c)) return true;
  }
  return false;
}

/** A match of `written` as bash writes it: relative when the word was, from the same base. */
function asWritten(
  match: string,
  written: string,
  context: PathContext,
  cwd: string | undefined,
): string {
  if (written.startsWith("/") || written.startsWith("~")) return match;
  const base = unfolded(written, context, cwd).slice(0, -written.length);
  return match.startsWith(base) ? match.slice(base.length) : match;
}
