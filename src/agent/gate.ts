import {
  coveredBySuggested,
  evaluate,
  formatRule,
  matchesRule,
  type PermissionMode,
  MAX_RULE_CONTENT_BYTES,
  readRuleCovering,
  ruleProblems,
} from "../permissions/index.js";
import { cutUtf8 } from "../tools/output-cap.js";
import type { Tool, ToolContext } from "../tools/tool.js";
import { diskProbes, realPathOf } from "./real-path.js";
import { parseToolInput } from "./tool-input.js";
import { type DecisionInfo, type Rule, ruleSchema, type ToolCallBlock } from "./types.js";

/** The session's permission state at the moment of a decision. */
export interface PermissionState {
  mode: PermissionMode;
  /** Every rule in effect: session, agent, tenant and configuration. */
  rules: readonly Rule[];
  workingDirectories: readonly string[];
  homeDir: string;
}

/**
 * The most bytes of a decision's reason, and of a suggested rule's content, a call carries: both go
 * out with the call to every client and count toward the reply's maxReplyBytes. A longer reason is
 * cut; a longer suggestion is left out (a rule that long would match almost nothing else, and no
 * rule's content may pass MAX_RULE_CONTENT_BYTES).
 */
export const MAX_DECISION_TEXT_BYTES = MAX_RULE_CONTENT_BYTES;

/** `reason`, cut to MAX_DECISION_TEXT_BYTES. */
export const shortReason = (reason: string): string =>
  Buffer.byteLength(reason) <= MAX_DECISION_TEXT_BYTES
    ? reason
    : `${cutUtf8(reason, MAX_DECISION_TEXT_BYTES - 3)}...`;

const RULE_KEYS = Object.keys(ruleSchema.shape) as (keyof Rule)[];

/**
 * A rule as a decision carries it: the fields of a rule, without what its store adds (a stored
 * rule also names its tenant, which the call's record and the wire do not carry).
 */
function ruleFieldsOf(rule: Rule): Rule {
  const out: Record<string, unknown> = {};
  for (const key of RULE_KEYS) if (rule[key] !== undefined) out[key] = rule[key];
  return out as Rule;
}

/** Asks the permission engine about one call whose input is valid. */
export function decide(
  call: ToolCallBlock,
  tool: Tool,
  input: unknown,
  state: PermissionState,
): DecisionInfo {
  const decision = evaluate({
    toolName: call.name,
    input,
    mode: state.mode,
    rules: state.rules,
    workingDirectories: state.workingDirectories,
    homeDir: state.homeDir,
    ...diskProbes,
    toolReadOnly: tool.isReadOnly(input),
    external: tool.external === true && tool.name !== "AskUser",
  });
  return {
    behavior: decision.behavior,
    reason: shortReason(decision.reason),
    ...(decision.rule ? { rule: ruleFieldsOf(decision.rule) } : {}),
    check: decision.check,
    bypassImmune: decision.bypassImmune,
    suggestedRules: decision.suggestedRules
      // A suggestion the API would refuse (content past MAX_RULE_CONTENT_BYTES, or holding a
      // control character, as a path may) is left out: a person could not accept it.
      .filter((r) => ruleProblems(r).length === 0)
      .map((r) => ({ ...r, source: "suggested" as const })),
  };
}

/**
 * What a searching tool leaves out under the session's rules (see `ToolContext.readRule`): the
 * deny or ask `Read(…)` rule that covers a file, as written. An ask rule that matched the call
 * itself (`Grep` of `secret/`) was put to the person, who allowed it: it keeps nothing out.
 */
export function readRuleOf(
  state: PermissionState,
  call: ToolCallBlock,
  tool: Tool | undefined,
): ToolContext["readRule"] {
  const covers = (rule: Rule) => rule.behavior !== "allow" && rule.toolName === "Read";
  if (!state.rules.some(covers)) return undefined;
  const context = { workingDirectories: state.workingDirectories, homeDir: state.homeDir };
  const parsed = parseToolInput(tool, call.name, call.input);
  const input = parsed.ok ? parsed.value : undefined;
  const rules = state.rules.filter(
    (rule) =>
      rule.behavior !== "ask" ||
      rule.toolName !== "Read" ||
      !matchesRule(rule, call.name, input, { ...context, realPath: realPathOf }),
  );
  const covering = readRuleCovering(rules, context);
  if (covering === undefined) return undefined;
  return (path, real) => {
    const rule = covering(path, real);
    return rule && formatRule(rule);
  };
}

/**
 * For a non-safety ASK inside a concurrent batch: the earlier call of the same tool, still asking,
 * whose suggested rules would allow this one (reference §4). The call is then held back without a
 * prompt of its own until that call is answered.
 */
export function findHolder(
  call: ToolCallBlock,
  input: unknown,
  decision: DecisionInfo,
  earlier: readonly ToolCallBlock[],
  state: PermissionState,
  external: boolean,
): ToolCallBlock | undefined {
  if (decision.bypassImmune) return undefined;
  return earlier.find(
    (other) =>
      other.name === call.name &&
      other.state === "asking" &&
      (other.suggestedRules?.length ?? 0) > 0 &&
      coveredBySuggested(
        other.suggestedRules ?? [],
        call.name,
        input,
        {
          workingDirectories: state.workingDirectories,
          homeDir: state.homeDir,
          ...diskProbes,
        },
        external,
      ),
  );
}
