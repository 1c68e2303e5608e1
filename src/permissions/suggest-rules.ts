import { posix } from "node:path";
import type { CallView } from "./describe-call.js";
import { escapeGlob } from "./escape-glob.js";
import { matchesBashPattern } from "./match-rule.js";
import type { PathContext, PermissionRule } from "./types.js";

/** The most Bash prefixes suggested for one call. */
export const MAX_BASH_SUGGESTIONS = 5;

/** A word that can stand in a `prefix:*` rule as written: no quotes, globs, expansions or `=`. */
const PLAIN_WORD = /^[A-Za-z0-9_./@%+,:-]+$/;

/**
 * Rules that would allow calls like this one, offered on a non-safety ASK (behavior allow, source
 * suggested). Accepting all of a call's suggestions allows it again, unless one of its commands
 * has no suggestion (a one-word command).
 * - Bash: for each simple command that needs a rule (see `findAllowingRule`) and that no allow rule
 *   in force (`inForce`) matches already, its first two words as `word1 word2:*`; distinct, at most
 *   five; none for a one-word command, nor for words that are not plain (quoted, globbed, an
 *   assignment).
 * - Read / Write / Edit: the parent directory and everything below (`/repo/src/**`).
 * - Glob / Grep: the search root and everything below.
 * Paths are escaped for globs; the root directory and the home directory are never suggested
 * (they would allow nearly everything).
 * - Any other tool: the tool itself (no content).
 */
export function suggestRules(
  toolName: string,
  view: CallView,
  context: PathContext,
  inForce: readonly PermissionRule[] = [],
): PermissionRule[] {
  const rule = (ruleContent?: string): PermissionRule =>
    ruleContent === undefined
      ? { toolName, behavior: "allow", source: "suggested" }
      : { toolName, ruleContent, behavior: "allow", source: "suggested" };
  switch (view.kind) {
    case "bash": {
      const prefixes: string[] = [];
      for (const [k, command] of view.script.commands.entries()) {
        if (view.needsNoRule[k] === true || prefixes.length >= MAX_BASH_SUGGESTIONS) continue;
        const allowed = inForce.some(
          (r) =>
            r.behavior === "allow" &&
            r.toolName === toolName &&
            r.ruleContent !== undefined &&
            matchesBashPattern(r.ruleContent, command.text),
        );
        if (allowed) continue;
        const [first, second] = command.words;
        if (first === undefined || second === undefined) continue;
        if (!PLAIN_WORD.test(first.raw) || !PLAIN_WORD.test(second.raw)) continue;
        const prefix = `${first.raw} ${second.raw}:*`;
        if (!prefixes.includes(prefix) && matchesBashPattern(prefix, command.text)) {
          prefixes.push(prefix);
        }
      }
      return prefixes.map((prefix) => rule(prefix));
    }
    case "file":
      return directoryRule(posix.dirname(view.path), context, rule);
    case "search":
      return directoryRule(view.root, context, rule);
    case "invalid":
      return [];
    default:
      return [rule()];
  }
}

function directoryRule(
  dir: string,
  context: PathContext,
  rule: (ruleContent: string) => PermissionRule,
): PermissionRule[] {
  if (dir === "/" || dir === posix.normalize(context.homeDir).replace(/\/+$/, "")) return [];
  return [rule(`${escapeGlob(dir)}/**`)];
}
