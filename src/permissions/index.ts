/** The permission engine: pure decisions on tool calls from rules, mode and working directories. */
export { evaluate } from "./evaluate.js";
export { coveredBySuggested } from "./covered-by-suggested.js";
export { matchesRule } from "./match-rule.js";
export { readRuleCovering } from "./read-rules.js";
export { formatRule, parseRule, sameRule } from "./rule-syntax.js";
export {
  MAX_RULE_CONTENT_BYTES,
  MAX_RULE_TOOL_NAME_CHARS,
  MAX_RULES_PER_SCOPE,
  type RuleProblem,
  ruleProblems,
} from "./rule-limits.js";
export {
  permissionBehaviorSchema,
  permissionModeSchema,
  permissionRuleSchema,
  ruleFields,
} from "./permission-rule-schema.js";
export { isBuiltin } from "./describe-call.js";
export { ProbeRefused } from "./probe-budget.js";
export { readGitIndex } from "./git-index.js";
export { globTooComplex } from "./glob-limits.js";
export {
  BUILTIN_TOOL_NAMES,
  PERMISSION_BEHAVIORS,
  PERMISSION_MODES,
  RULE_SCOPES,
  RULE_SOURCES,
} from "./types.js";
export type {
  BuiltinToolName,
  Decision,
  PathContext,
  PermissionBehavior,
  PermissionCheck,
  PermissionMode,
  PermissionRequest,
  PermissionRule,
  RuleScope,
  RuleSource,
  SafetyCheck,
} from "./types.js";
