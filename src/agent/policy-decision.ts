import type { PolicyConfig } from "../config/policy-schema.js";
import type { PermissionMode } from "../permissions/index.js";
import { shortReason } from "./gate.js";
import type { DecisionInfo, PolicyResult } from "./types.js";

/** The check a decision names when the policy service changed it. */
export const POLICY_CHECK = "policy";

const STRICTNESS = { allow: 0, ask: 1, deny: 2 } as const;

/** What the service said (or how asking it failed), as it reaches `applyPolicy`. */
export interface PolicyAnswer {
  result: PolicyResult;
  /** The service's reason, or what failed (for an error or a timeout). */
  reason?: string;
  latencyMs: number;
}

/** Whether the engine's `decision` goes to the policy service: a DENY never does. */
export function consultsPolicy(config: PolicyConfig, decision: DecisionInfo): boolean {
  return decision.behavior === "allow" || (decision.behavior === "ask" && config.calls === "all");
}

function defaultReason(behavior: "ask" | "deny"): string {
  return behavior === "ask"
    ? "the policy service asks for a confirmation"
    : "denied by the policy service";
}

/** The modes in which nothing asks a person: what would ask is denied instead. */
const NEVER_ASK: ReadonlySet<PermissionMode> = new Set(["dont_ask", "explore"]);

/**
 * The decision that takes effect once the policy service answered: only tightening counts (ALLOW
 * into ASK or DENY, ASK into DENY); an answer that would loosen the engine's decision is ignored
 * (and marked `ignored`). A failure (error, timeout) asks or denies as `onError` says. In the
 * session's `dont_ask` and `explore` modes, which never ask a person, an ASK (the service's or
 * onError's) is a DENY, as the engine's own ASKs are there. A decision the service changed names
 * the check "policy" and its reason (or a default), carries no rule and no suggested rules, and
 * is bypass-immune: no rule a person accepts would clear it.
 */
export function applyPolicy(
  engine: DecisionInfo,
  answer: PolicyAnswer,
  onError: PolicyConfig["onError"],
  mode: PermissionMode,
): DecisionInfo {
  const failed = answer.result === "error" || answer.result === "timeout";
  const asked = failed ? onError : (answer.result as keyof typeof STRICTNESS);
  const neverAsks = asked === "ask" && NEVER_ASK.has(mode);
  const wanted = neverAsks ? "deny" : asked;
  const policy = {
    result: answer.result,
    ...(answer.reason === undefined ? {} : { reason: shortReason(answer.reason) }),
    latencyMs: answer.latencyMs,
    engineBehavior: engine.behavior,
    engineCheck: engine.check,
  };
  const delta = STRICTNESS[wanted] - STRICTNESS[engine.behavior];
  if (delta < 0) return { ...engine, policy: { ...policy, ignored: true } };
  if (delta === 0 || wanted === "allow") return { ...engine, policy };
  const reason = failed
    ? `policy service ${answer.reason ?? "failed"}; onError ${onError === "ask" ? "asks" : "denies"}`
    : (answer.reason ?? defaultReason(asked === "deny" ? "deny" : "ask"));
  return {
    behavior: wanted,
    reason: shortReason(neverAsks ? `${reason}, and ${mode} mode denies instead` : reason),
    check: POLICY_CHECK,
    bypassImmune: true,
    suggestedRules: [],
    policy,
  };
}
