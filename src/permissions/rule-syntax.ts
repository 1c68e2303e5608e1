import type { PermissionBehavior, PermissionRule } from "./types.js";

/**
 * The display form of rules, `ToolName` or `ToolName(content)`, e.g. `Bash(npm test:*)`,
 * `Write(/repo/src/**)`. The content is everything between the first `(` and the last `)`, so it
 * may itself contain parentheses; the behavior is not part of the display form.
 */

/** `Bash(npm test:*)` for a rule with content, `Write` for a tool-name rule. */
export function formatRule(rule: Pick<PermissionRule, "toolName" | "ruleContent">): string {
  const content = rule.ruleContent;
  return content === undefined || content === "" ? rule.toolName : `${rule.toolName}(${content})`;
}

const TOOL_NAME = /^[^\s()]+$/;

/**
 * Parses the display form back into a rule with the given behavior; undefined when `text` is not a
 * rule (empty, a tool name with spaces or parentheses, unbalanced parentheses). `Bash()` and `Bash`
 * both mean the tool-name rule.
 */
export function parseRule(
  text: string,
  behavior: PermissionBehavior = "allow",
): PermissionRule | undefined {
  const trimmed = text.trim();
  const open = trimmed.indexOf("(");
  if (open === -1) return TOOL_NAME.test(trimmed) ? { toolName: trimmed, behavior } : undefined;
  if (!trimmed.endsWith(")")) return undefined;
  const toolName = trimmed.slice(0, open);
  if (!TOOL_NAME.test(toolName)) return undefined;
  const ruleContent = trimmed.slice(open + 1, -1);
  return ruleContent === "" ? { toolName, behavior } : { toolName, ruleContent, behavior };
}

/** Whether two rules do the same thing: same tool, same content (none and "" alike), same behavior. */
export function sameRule(a: PermissionRule, b: PermissionRule): boolean {
  return (
    a.toolName === b.toolName &&
    (a.ruleContent ?? "") === (b.ruleContent ?? "") &&
    a.behavior === b.behavior
  );
}
