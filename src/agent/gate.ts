import { coveredBySuggested, evaluate, type PermissionMode } from "../permissions/index.js";
import type { Tool } from "../tools/tool.js";
import { realPathOf } from "./real-path.js";
import type { DecisionInfo, Rule, ToolCallBlock } from "./types.js";

/** The session's permission state at the moment of a decision. */
export interface PermissionState {
  mode: PermissionMode;
  /** Every rule in effect: session, agent, tenant and configuration. */
  rules: readonly Rule[];
  workingDirectories: readonly string[];
  homeDir: string;
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
    realPath: realPathOf,
    toolReadOnly: tool.isReadOnly(input),
    external: tool.external === true && tool.name !== "AskUser",
  });
  return {
    behavior: decision.behavior,
    reason: decision.reason,
    ...(decision.rule ? { rule: decision.rule } : {}),
    check: decision.check,
    bypassImmune: decision.bypassImmune,
    suggestedRules: decision.suggestedRules.map((r) => ({ ...r, source: "suggested" as const })),
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
          realPath: realPathOf,
        },
        external,
      ),
  );
}
