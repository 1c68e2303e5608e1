import { parseToolInput } from "../agent/tool-input.js";
import type { Rule, ToolCallBlock } from "../agent/types.js";
import { failedPrecondition } from "../common/errors.js";
import { evaluate, formatRule, type PermissionRule } from "../permissions/index.js";
import type { Tool } from "../tools/tool.js";

/** What the check needs of an answer's session. */
interface DenyContext {
  tools: ReadonlyMap<string, Tool>;
  rules: readonly Rule[];
  workingDirectories: readonly string[];
  homeDir: string;
}

/**
 * The deny rule among the session's rules (`ctx`) that matches a call of `toolName` with `input`
 * (its JSON), if any: a confirmed call runs only if none does, whether its input was edited or it
 * waited while the rule was added.
 */
export function denyingRule(
  toolName: string,
  input: string,
  ctx: DenyContext,
): PermissionRule | undefined {
  const rules = ctx.rules.filter((r) => r.behavior === "deny");
  if (rules.length === 0) return undefined;
  const parsed = parseToolInput(ctx.tools.get(toolName), toolName, input);
  if (!parsed.ok) return undefined;
  const denied = evaluate({
    toolName,
    input: parsed.value,
    mode: "default",
    rules,
    workingDirectories: ctx.workingDirectories,
    homeDir: ctx.homeDir,
  });
  return denied.behavior === "deny" ? denied.rule : undefined;
}

/**
 * Refuses the confirmation of `call` (FAILED_PRECONDITION, nothing changes) when a deny rule added
 * while it waited matches it: the person may deny it, or the rule be removed first.
 */
export function refuseDenied(call: ToolCallBlock, ctx: DenyContext): void {
  const rule = denyingRule(call.name, call.input, ctx);
  if (!rule) return;
  const text = `denied by rule ${formatRule(rule)}`;
  throw failedPrecondition(
    `tool call ${call.id} (${call.name}) is ${text}, added since it was asked; deny it, or remove the rule`,
    [{ type: "TOOL_CALL_STATE", subject: call.id, description: text }],
  );
}
