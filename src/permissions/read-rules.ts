import { matchesLocated } from "./match-rule.js";
import type { PathContext, PermissionRule } from "./types.js";

/**
 * The deny and ask `Read(…)` rules among `rules`, as a test of one file that a search would read:
 * the first rule that covers it as found (`path`) or where it leads (`real`). The Grep and Glob
 * tools leave such files out of what they search and list, so that a rule on `./secret/**` keeps
 * `secret/` out of a search of the whole project (which the rules do not deny: its root is not
 * under them). Undefined when no rule could cover a file.
 */
export function readRuleCovering(
  rules: readonly PermissionRule[],
  context: PathContext,
): ((path: string, real: string) => PermissionRule | undefined) | undefined {
  const covering = rules.filter(
    (rule): rule is PermissionRule & { ruleContent: string } =>
      rule.behavior !== "allow" &&
      rule.toolName === "Read" &&
      rule.ruleContent !== undefined &&
      rule.ruleContent !== "",
  );
  if (covering.length === 0) return undefined;
  return (path, real) =>
    covering.find((rule) =>
      matchesLocated(rule.ruleContent, { written: path, path, real }, context),
    );
}
