import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/index.js";
import {
  ListRulesResponse,
  PermissionBehavior,
  RuleScope,
  RuleSource,
} from "../../../src/generated/parkway/v1/permission.js";
import { newId } from "../../../src/common/ids.js";
import {
  MAX_RULE_CONTENT_BYTES,
  MAX_RULE_TOOL_NAME_CHARS,
  MAX_RULES_PER_SCOPE,
  ruleProblems,
} from "../../../src/permissions/index.js";
import { buildAgents } from "../../../src/runtime/build-agents.js";

const DEFAULT_CLIENT_RECEIVE_BYTES = 4 * 1024 * 1024;

describe("rule limits", () => {
  it("keep the largest ListRules response of a session well within a default client's 4 MiB", () => {
    // A session's rules in effect: configured, tenant, agent and session scope, each full, each
    // rule with every field at its largest (content of 4-byte characters, the longest names).
    const rule = (i: number) => ({
      id: newId("rule"),
      toolName: "T".repeat(MAX_RULE_TOOL_NAME_CHARS),
      ruleContent: `${i}`
        .padEnd(MAX_RULE_CONTENT_BYTES / 4, "😀")
        .slice(0, MAX_RULE_CONTENT_BYTES / 4),
      behavior: PermissionBehavior.PERMISSION_BEHAVIOR_ASK,
      scope: RuleScope.RULE_SCOPE_SESSION,
      source: RuleSource.RULE_SOURCE_CONFIRMATION,
      createdBy: "n".repeat(128),
      createdAt: new Date(),
      sessionId: newId("ses"),
      agentId: "a".repeat(64),
      toolCallId: newId("call"),
    });
    const rules = Array.from({ length: 4 * MAX_RULES_PER_SCOPE }, (_, i) => rule(i));
    expect(rules.every((r) => ruleProblems(r).length === 0)).toBe(true);
    const bytes = ListRulesResponse.encode({ rules }).finish().length;
    expect(bytes).toBeLessThan(0.7 * DEFAULT_CLIENT_RECEIVE_BYTES);
  });

  it("refuses configured rules the API would refuse, and more than an agent holds", async () => {
    const build = (permissions: Record<string, string[]>) =>
      buildAgents({
        config: parseConfig({
          agents: [{ id: "a", workingDirectories: ["/tmp"], permissions }],
        }),
        defaultModel: () => Promise.resolve({ name: "none" } as never),
        builtinTools: [],
      });
    await expect(build({ allow: ["Bash( )"] })).rejects.toThrow(
      'invalid config: agents[0].permissions.allow[0]: "Bash( )": its content is empty',
    );
    await expect(build({ deny: ["Read", `Bash(${"x".repeat(1025)})`] })).rejects.toThrow(
      'agents[0].permissions.deny[1]: "Bash(xxx',
    );
    await expect(build({ ask: ["Bash(ls\u0000)"] })).rejects.toThrow("control character");
    await expect(build({ allow: ["Bash.x(ls)"] })).rejects.toThrow("its tool name");
    const many = Array.from({ length: 300 }, (_, i) => `Bash(cmd${i}:*)`);
    await expect(build({ allow: many, deny: many })).rejects.toThrow(
      "invalid config: agents[0].permissions: 600 rules; an agent has at most 500",
    );
    await expect(build({ allow: many, deny: ["Bash()", "Read"] })).resolves.toBeDefined();
  });
});
