import { describe, expect, it } from "vitest";
import {
  applyPolicy,
  consultsPolicy,
  POLICY_CHECK,
  type PolicyAnswer,
} from "../../../src/agent/policy-decision.js";
import type { DecisionInfo } from "../../../src/agent/types.js";
import { policyConfigSchema } from "../../../src/config/policy-schema.js";

const allow: DecisionInfo = {
  behavior: "allow",
  reason: "matched allow rule Bash(npm test:*)",
  rule: { toolName: "Bash", ruleContent: "npm test:*", behavior: "allow", source: "config" },
  check: "rule.allow",
  bypassImmune: false,
  suggestedRules: [],
};
const ask: DecisionInfo = {
  behavior: "ask",
  reason: "mode default asks",
  check: "mode.default",
  bypassImmune: false,
  suggestedRules: [
    { toolName: "Bash", ruleContent: "mkdir:*", behavior: "allow", source: "suggested" },
  ],
};
const deny: DecisionInfo = { ...ask, behavior: "deny", check: "rule.deny", suggestedRules: [] };
const answer = (result: PolicyAnswer["result"], reason?: string): PolicyAnswer => ({
  result,
  ...(reason === undefined ? {} : { reason }),
  latencyMs: 12.5,
});

describe("applyPolicy", () => {
  it("lets the service turn ALLOW into ASK or DENY, with its reason, no rule and no suggestions", () => {
    const denied = applyPolicy(allow, answer("deny", "not on Fridays"), "ask", "default");
    expect(denied).toEqual({
      behavior: "deny",
      reason: "not on Fridays",
      check: POLICY_CHECK,
      bypassImmune: true,
      suggestedRules: [],
      policy: {
        result: "deny",
        reason: "not on Fridays",
        latencyMs: 12.5,
        engineBehavior: "allow",
        engineCheck: "rule.allow",
      },
    });
    const asked = applyPolicy(allow, answer("ask"), "deny", "default");
    expect(asked).toMatchObject({ behavior: "ask", check: "policy", bypassImmune: true });
    expect(asked.reason).toBe("the policy service asks for a confirmation");
    expect(asked.rule).toBeUndefined();
    expect(applyPolicy(allow, answer("deny"), "ask", "default").reason).toBe(
      "denied by the policy service",
    );
  });

  it("lets the service turn ASK into DENY", () => {
    const denied = applyPolicy(ask, answer("deny", "no"), "ask", "default");
    expect(denied).toMatchObject({ behavior: "deny", check: "policy", reason: "no" });
    expect(denied.policy?.engineBehavior).toBe("ask");
  });

  it("never loosens: an ALLOW answer to an ASK is ignored, and marked so", () => {
    const kept = applyPolicy(ask, answer("allow", "fine by me"), "ask", "default");
    expect(kept).toEqual({
      ...ask,
      policy: {
        result: "allow",
        reason: "fine by me",
        latencyMs: 12.5,
        engineBehavior: "ask",
        engineCheck: "mode.default",
        ignored: true,
      },
    });
    expect(applyPolicy(deny, answer("allow"), "ask", "default").behavior).toBe("deny");
    expect(applyPolicy(deny, answer("ask"), "ask", "default").policy?.ignored).toBe(true);
  });

  it("keeps the engine's decision when the service agrees", () => {
    expect(applyPolicy(allow, answer("allow"), "deny", "default")).toEqual({
      ...allow,
      policy: {
        result: "allow",
        latencyMs: 12.5,
        engineBehavior: "allow",
        engineCheck: "rule.allow",
      },
    });
    const same = applyPolicy(ask, answer("ask"), "deny", "default");
    expect(same).toMatchObject({ behavior: "ask", check: "mode.default", bypassImmune: false });
    expect(same.suggestedRules).toEqual(ask.suggestedRules);
  });

  it("follows onError on a failure or a timeout, naming what failed", () => {
    const timedOut = applyPolicy(
      allow,
      answer("timeout", "timed out after 2000 ms"),
      "ask",
      "default",
    );
    expect(timedOut).toMatchObject({ behavior: "ask", check: "policy", bypassImmune: true });
    expect(timedOut.reason).toBe("policy service timed out after 2000 ms; onError asks");
    const failed = applyPolicy(allow, answer("error", "answered HTTP 500"), "deny", "default");
    expect(failed.behavior).toBe("deny");
    expect(failed.reason).toBe("policy service answered HTTP 500; onError denies");
    // onError "ask" on an ASK keeps the engine's ASK (and its suggestions).
    expect(applyPolicy(ask, answer("error", "x"), "ask", "default")).toMatchObject({
      behavior: "ask",
      check: "mode.default",
    });
  });

  it("denies instead of asking in dont_ask and explore modes, saying so", () => {
    for (const mode of ["dont_ask", "explore"] as const) {
      expect(applyPolicy(allow, answer("ask", "look first"), "deny", mode)).toMatchObject({
        behavior: "deny",
        check: "policy",
        reason: `look first, and ${mode} mode denies instead`,
        policy: { result: "ask", engineBehavior: "allow" },
      });
      expect(
        applyPolicy(allow, answer("timeout", "timed out after 5 ms"), "ask", mode),
      ).toMatchObject({
        behavior: "deny",
        reason: `policy service timed out after 5 ms; onError asks, and ${mode} mode denies instead`,
      });
      expect(applyPolicy(allow, answer("deny", "no"), "ask", mode).reason).toBe("no");
    }
    expect(applyPolicy(allow, answer("ask"), "deny", "bypass").behavior).toBe("ask");
  });

  it("cuts a long reason", () => {
    const long = "x".repeat(5000);
    const denied = applyPolicy(allow, answer("deny", long), "ask", "default");
    expect(Buffer.byteLength(denied.reason)).toBeLessThanOrEqual(1024);
    expect(Buffer.byteLength(denied.policy!.reason!)).toBeLessThanOrEqual(1024);
  });
});

describe("consultsPolicy", () => {
  it("sends ALLOWs, ASKs only with calls all, never a DENY", () => {
    const allowed = policyConfigSchema.parse({ url: "http://127.0.0.1:1/" });
    const all = policyConfigSchema.parse({ url: "http://127.0.0.1:1/", calls: "all" });
    expect([allow, ask, deny].map((d) => consultsPolicy(allowed, d))).toEqual([true, false, false]);
    expect([allow, ask, deny].map((d) => consultsPolicy(all, d))).toEqual([true, true, false]);
  });
});
