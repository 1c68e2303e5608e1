import { afterEach, describe, expect, it } from "vitest";
import { ParkwayClientError } from "../../src/client/index.js";
import {
  ListRulesResponse,
  PermissionBehavior,
  type PermissionRule,
  RuleScope,
} from "../../src/generated/parkway/v1/permission.js";
import { collect, type Harness, startedCalls, startHarness } from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const ALLOW = PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW;
const SESSION = RuleScope.RULE_SCOPE_SESSION;
const TENANT = RuleScope.RULE_SCOPE_TENANT;

async function refused(p: Promise<unknown>): Promise<ParkwayClientError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ParkwayClientError);
  return err as ParkwayClientError;
}

/** A content of exactly `bytes` bytes, different for each `i`. */
const content = (i: number, bytes = 1024) => `${i}:`.padEnd(bytes, "x");

describe("PermissionService rule limits", () => {
  it("refuses blank or explicitly empty contents, contents too long or with control characters, and names that are no tool's, naming the field", async () => {
    h = await startHarness({ turns: [] });
    const client = h.client;
    const ok: Partial<PermissionRule> = { toolName: "Read", behavior: ALLOW, scope: TENANT };
    const cases: [Partial<PermissionRule>, string, RegExp][] = [
      [{ toolName: "Bash", ruleContent: "" }, "rule_content", /is empty; leave it unset/],
      [{ toolName: "Bash", ruleContent: "  \t " }, "rule_content", /is empty; leave it unset/],
      [{ toolName: "Bash", ruleContent: "x".repeat(1025) }, "rule_content", /at most 1024 bytes/],
      [{ toolName: "Bash", ruleContent: "x".repeat(100_000) }, "rule_content", /at most 1024/],
      [{ toolName: "Bash", ruleContent: "git\u0000push" }, "rule_content", /control character/],
      [{ toolName: "Bash", ruleContent: "ls\n rm -rf /" }, "rule_content", /control character/],
      [{ toolName: "Read", ruleContent: "*a*a*a*b" }, "rule_content", /at most 2 in one segment/],
      [{ toolName: "Edit", ruleContent: "+(a|aa)b" }, "rule_content", /extglob/],
      [{ toolName: "Nope Tool()" }, "tool_name", /is not a tool name/],
      [{ toolName: "Bash\u0000" }, "tool_name", /is not a tool name/],
      [{ toolName: "T".repeat(65) }, "tool_name", /is not a tool name/],
    ];
    for (const [rule, field, description] of cases) {
      const err = await refused(client.addRules([ok, { behavior: ALLOW, scope: TENANT, ...rule }]));
      expect(err.codeName).toBe("INVALID_ARGUMENT");
      expect(err.fieldViolations[0]?.field).toBe(`rules[1].${field}`);
      expect(err.fieldViolations[0]?.description).toMatch(description);
    }
    // Nothing of a refused request is stored.
    expect(await client.listRules({ scope: TENANT })).toEqual([]);

    // At the limits, and a tool-name rule (content unset), are stored.
    const added = await client.addRules([
      { toolName: "Bash", ruleContent: "é".repeat(512), behavior: ALLOW, scope: TENANT },
      { toolName: "mcp__fs__read_file", behavior: ALLOW, scope: TENANT },
      { toolName: "T".repeat(64), ruleContent: "a b", behavior: ALLOW, scope: TENANT },
      { toolName: "Bash", behavior: ALLOW, scope: TENANT },
    ]);
    expect(added.added).toBe(4);
    expect(added.rules[3]!.ruleContent).toBeUndefined();
  });

  it("refuses an accepted rule with empty content or a control character, naming the field", async () => {
    h = await startHarness({
      turns: [{ toolCalls: [{ id: "c1", name: "Bash", input: { command: "touch f" } }] }],
    });
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const events = await collect(chat.message("go"));
    const [callId] = startedCalls(events);
    const call = (await h.client.getSession(session.id)).pendingToolCalls[0]!;
    expect(call.id).toBe(callId);
    for (const [ruleContent, description] of [
      ["", /is empty/],
      ["touch\u0007:*", /control character/],
      ["x".repeat(2000), /at most 1024/],
    ] as const) {
      const err = await refused(
        chat.confirm(call, { rules: [{ ...call.suggestedRules[0]!, ruleContent }] }),
      );
      expect(err.codeName, err.message).toBe("INVALID_ARGUMENT");
      expect(err.fieldViolations[0]?.field).toBe(
        "user_confirm_result.confirm_results[0].rules[0].rule_content",
      );
      expect(err.fieldViolations[0]?.description).toMatch(description);
    }
    chat.close();
    expect(await h.client.listRules({ sessionId: session.id, scope: SESSION })).toEqual([]);
  });

  it("holds at most 500 rules per scope, so a session's rules in effect fit a default client", async () => {
    // 500 configured rules of 1,024 bytes, and 500 of each stored scope: the most ListRules sends.
    const configured = Array.from({ length: 500 }, (_, i) => `Bash(${content(i)})`);
    h = await startHarness({ turns: [] }, { permissions: { allow: configured } });
    const client = h.client;
    const session = await client.createSession({ agentId: "test" });
    const many = (scope: RuleScope, from: number, n = 500): Partial<PermissionRule>[] =>
      Array.from({ length: n }, (_, i) => ({
        toolName: "Bash",
        ruleContent: content(from + i),
        behavior: ALLOW,
        scope,
        sessionId: scope === SESSION ? session.id : "",
        agentId: scope === RuleScope.RULE_SCOPE_AGENT ? "test" : "",
      }));
    for (const [scope, from] of [
      [SESSION, 1000],
      [RuleScope.RULE_SCOPE_AGENT, 2000],
      [TENANT, 3000],
    ] as const) {
      expect((await client.addRules(many(scope, from))).added).toBe(500);
      const full = await refused(client.addRules(many(scope, from + 500, 1)));
      expect(full.codeName).toBe("RESOURCE_EXHAUSTED");
      expect(full.message).toMatch(/rulesPerScope \(500\)/);
      // A rule already stored is no new rule: it is returned, not refused.
      expect((await client.addRules(many(scope, from, 1))).added).toBe(0);
    }
    // One more in one scope of a request refuses the whole request.
    const other = await client.createSession({ agentId: "test" });
    const mixed = await refused(
      client.addRules([
        { toolName: "Read", behavior: ALLOW, scope: SESSION, sessionId: other.id },
        ...many(SESSION, 5000, 1),
      ]),
    );
    expect(mixed.codeName).toBe("RESOURCE_EXHAUSTED");
    expect(await client.listRules({ sessionId: other.id, scope: SESSION })).toEqual([]);

    const inEffect = await client.listRules({ sessionId: session.id });
    expect(inEffect).toHaveLength(2000);
    const bytes = ListRulesResponse.encode({ rules: inEffect }).finish().length;
    expect(bytes).toBeLessThan(3 * 1024 * 1024);
  });
});

describe("PermissionService under concurrent calls", () => {
  it("stores a rule added by several calls at once only once", async () => {
    h = await startHarness({ turns: [] });
    const client = h.client;
    const session = await client.createSession({ agentId: "test" });
    const rule = {
      toolName: "Grep",
      ruleContent: "dupe",
      behavior: ALLOW,
      scope: SESSION,
      sessionId: session.id,
    };
    const results = await Promise.all([1, 2, 3, 4].map(() => client.addRules([rule])));
    expect(results.map((r) => r.added).sort()).toEqual([0, 0, 0, 1]);
    expect(new Set(results.map((r) => r.rules[0]!.id)).size).toBe(1);
    const listed = await client.listRules({ sessionId: session.id, scope: SESSION });
    expect(listed.map((r) => r.id)).toEqual([results[0]!.rules[0]!.id]);
  });

  it("removes a rule once when several calls remove it at once: the others answer NOT_FOUND", async () => {
    h = await startHarness({ turns: [] });
    const client = h.client;
    const { rules } = await client.addRules([
      { toolName: "Grep", ruleContent: "gone", behavior: ALLOW, scope: TENANT },
    ]);
    const id = rules[0]!.id;
    const outcomes = await Promise.allSettled([1, 2, 3].map(() => client.removeRule(id)));
    const removed = outcomes.filter((o) => o.status === "fulfilled");
    expect(removed).toHaveLength(1);
    expect((removed[0] as PromiseFulfilledResult<PermissionRule>).value.id).toBe(id);
    for (const o of outcomes.filter((o) => o.status === "rejected")) {
      expect((o.reason as ParkwayClientError).codeName).toBe("NOT_FOUND");
    }
    expect(await client.listRules({ scope: TENANT })).toEqual([]);
  });
});
