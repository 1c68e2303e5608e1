import { decide } from "./gate.js";
import { askPolicy, policyRequest, type ReplyPolicy } from "./policy-client.js";
import { applyPolicy, consultsPolicy } from "./policy-decision.js";
import type { ReplyEnv } from "./reply-env.js";
import { parseToolInput } from "./tool-input.js";
import type { DecisionInfo, ToolCallBlock } from "./types.js";

/** Whether `call` is one a person confirmed with an input of their own, not yet run. */
function editedByPerson(call: ToolCallBlock): boolean {
  return call.state === "allowed" && call.inputEdited === true;
}

/**
 * The engine's decision on a call of the batch that is about to be decided (pending, not held
 * behind a call still asking, with a valid input), or on the input a person confirmed in place of
 * the model's, when that decision goes to the policy service.
 */
function toConsult(call: ToolCallBlock, env: ReplyEnv, batch: readonly ToolCallBlock[]) {
  if (!editedByPerson(call) && (call.state !== "pending" || call.inputDroppedBytes !== undefined)) {
    return undefined;
  }
  if (call.heldBy && batch.find((c) => c.id === call.heldBy)?.state === "asking") return undefined;
  const tool = env.agent.tools.get(call.name);
  const parsed = parseToolInput(tool, call.name, call.input);
  if (!parsed.ok || !tool) return undefined;
  const state = env.permissions();
  const decision = decide(call, tool, parsed.value, state);
  return { decision, state, input: parsed.value };
}

/**
 * What a call a person confirmed with an edited input becomes once the service answered about that
 * input: denied when the service's answer (or its failure, by `onError`) denies; otherwise it runs
 * on the person's confirmation, which answers an ASK already.
 */
function afterConfirmation(decision: DecisionInfo): DecisionInfo {
  if (decision.behavior === "deny") return decision;
  return {
    behavior: "allow",
    reason: "confirmed by a person with an edited input",
    check: "confirmation",
    bypassImmune: false,
    suggestedRules: [],
    ...(decision.policy ? { policy: decision.policy } : {}),
  };
}

/**
 * Asks the policy service, concurrently, about every call of `batch` the engine would allow (with
 * `calls: "all"`, also ask), and resolves the decisions that take effect, by call. A call a person
 * confirmed with an input of their own is judged again on that input as a new call would be: if
 * the engine's decision on it goes to the service, the service's DENY (or a failure with `onError:
 * deny`) denies it; any other answer lets it run. Calls that are not asked are absent (their
 * decision is made as without a service). Resolves early, with what is missing absent, when the
 * reply's signal aborts: the requests in flight are abandoned.
 */
export async function consultPolicy(
  batch: readonly ToolCallBlock[],
  env: ReplyEnv,
  policy: ReplyPolicy,
): Promise<Map<ToolCallBlock, DecisionInfo>> {
  const decided = new Map<ToolCallBlock, DecisionInfo>();
  await Promise.all(
    batch.map(async (call) => {
      const engine = toConsult(call, env, batch);
      if (!engine || !consultsPolicy(policy.config, engine.decision)) return;
      const body = policyRequest(call, engine.input, engine.decision, policy.session, engine.state);
      const answer = await askPolicy(policy.config, body, env.signal);
      if (!answer) return;
      const applied = applyPolicy(
        engine.decision,
        answer,
        policy.config.onError,
        engine.state.mode,
      );
      decided.set(call, editedByPerson(call) ? afterConfirmation(applied) : applied);
    }),
  );
  return decided;
}
