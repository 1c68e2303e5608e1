import { afterEach, describe, expect, it } from "vitest";
import { ParkwayClientError } from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import {
  PermissionBehavior,
  PermissionMode,
  RuleScope,
  RuleSource,
} from "../../src/generated/parkway/v1/permission.js";
import {
  collect,
  type Harness,
  kind,
  startedCalls,
  startHarness,
} from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const ALLOW = PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW;

async function refused(p: Promise<unknown>): Promise<ParkwayClientError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ParkwayClientError);
  return err as ParkwayClientError;
}

describe("PermissionService", () => {
  it("adds rules de-duplicated per scope, lists them by session and scope, and removes them", async () => {
    h = await startHarness({ turns: [] }, { permissions: { deny: ["Bash(rm:*)"] } });
    const session = await h.client.createSession({ agentId: "test" });
    const added = await h.client.addRules([
      {
        toolName: "Bash",
        ruleContent: "npm test:*",
        behavior: ALLOW,
        scope: RuleScope.RULE_SCOPE_SESSION,
        sessionId: session.id,
      },
      { toolName: "Read", behavior: ALLOW, scope: RuleScope.RULE_SCOPE_AGENT, agentId: "test" },
      {
        toolName: "Bash",
        ruleContent: "npm test:*",
        behavior: ALLOW,
        scope: RuleScope.RULE_SCOPE_SESSION,
        sessionId: session.id,
      },
    ]);
    expect(added.added).toBe(2);
    expect(added.rules[2]!.id).toBe(added.rules[0]!.id);
    expect(added.rules[0]!.source).toBe(RuleSource.RULE_SOURCE_API);
    expect(added.rules[0]!.createdAt).toBeInstanceOf(Date);

    const inEffect = await h.client.listRules({ sessionId: session.id });
    const shown = inEffect.map(
      (r) => `${r.toolName}(${r.ruleContent ?? ""}) ${RuleScope[r.scope]}`,
    );
    expect(shown.sort()).toEqual([
      "Bash(npm test:*) RULE_SCOPE_SESSION",
      "Bash(rm:*) RULE_SCOPE_AGENT",
      "Read() RULE_SCOPE_AGENT",
    ]);
    const agentRules = await h.client.listRules({
      scope: RuleScope.RULE_SCOPE_AGENT,
      agentId: "test",
    });
    expect(agentRules.map((r) => r.toolName).sort()).toEqual(["Bash", "Read"]);

    await h.client.removeRule(added.rules[0]!.id);
    expect(
      (await h.client.listRules({ sessionId: session.id })).map((r) => r.ruleContent ?? ""),
    ).not.toContain("npm test:*");
    const missing = await refused(h.client.removeRule(added.rules[0]!.id));
    expect(missing.codeName).toBe("NOT_FOUND");
  });

  it("refuses rules without a tool, a behavior, or their scope's target, naming the field", async () => {
    h = await startHarness({ turns: [] });
    const noTool = await refused(
      h.client.addRules([{ behavior: ALLOW, scope: RuleScope.RULE_SCOPE_TENANT }]),
    );
    expect(noTool.fieldViolations[0]?.field).toBe("rules[0].tool_name");
    const noBehavior = await refused(
      h.client.addRules([{ toolName: "Read", scope: RuleScope.RULE_SCOPE_TENANT }]),
    );
    expect(noBehavior.fieldViolations[0]?.field).toBe("rules[0].behavior");
    const noSession = await refused(
      h.client.addRules([
        { toolName: "Read", behavior: ALLOW, scope: RuleScope.RULE_SCOPE_SESSION },
      ]),
    );
    expect(noSession.fieldViolations[0]?.field).toBe("rules[0].session_id");
    const unknownSession = await refused(
      h.client.addRules([
        {
          toolName: "Read",
          behavior: ALLOW,
          scope: RuleScope.RULE_SCOPE_SESSION,
          sessionId: "ses_nope",
        },
      ]),
    );
    expect(unknownSession.codeName).toBe("NOT_FOUND");
    expect(await h.client.listRules({ scope: RuleScope.RULE_SCOPE_TENANT })).toEqual([]);
  });

  it("explains decisions with the deciding rule or check and the suggestions", async () => {
    h = await startHarness({ turns: [] }, { permissions: { deny: ["Bash(rm:*)"] } });
    const session = await h.client.createSession({ agentId: "test" });
    const denied = await h.client.explain({
      sessionId: session.id,
      toolName: "Bash",
      input: '{"command":"rm -r x"}',
    });
    expect(denied.behavior).toBe(PermissionBehavior.PERMISSION_BEHAVIOR_DENY);
    expect(denied.rule?.ruleContent).toBe("rm:*");
    const asked = await h.client.explain({
      sessionId: session.id,
      toolName: "Bash",
      input: '{"command":"git commit -m x"}',
    });
    expect(asked.behavior).toBe(PermissionBehavior.PERMISSION_BEHAVIOR_ASK);
    expect(asked.suggestedRules.map((r) => r.ruleContent)).toEqual(["git commit:*"]);
    const read = await h.client.explain({
      sessionId: session.id,
      toolName: "Bash",
      input: '{"command":"ls -la"}',
    });
    expect(read.behavior).toBe(ALLOW);
    expect(read.check).toBe("read_only");
    const bad = await refused(
      h.client.explain({ sessionId: session.id, toolName: "Bash", input: "{oops" }),
    );
    expect(bad.fieldViolations[0]?.field).toBe("input");
    const unknown = await refused(
      h.client.explain({ sessionId: session.id, toolName: "Nope", input: "{}" }),
    );
    expect(unknown.fieldViolations[0]?.field).toBe("tool_name");
  });

  it("sets a session's mode, which the next decision uses", async () => {
    h = await startHarness({
      turns: [
        {
          match: { lastUser: "" },
          repeat: true,
          toolCalls: [{ name: "Bash", input: { command: "npm install left-pad" } }],
        },
        { match: { toolName: "Bash" }, repeat: true, text: "ran" },
      ],
    });
    const session = await h.client.createSession({ agentId: "test" });
    expect(await h.client.setMode(session.id, PermissionMode.PERMISSION_MODE_DONT_ASK)).toBe(
      PermissionMode.PERMISSION_MODE_DONT_ASK,
    );
    const chat = await h.client.attach(session.id);
    const events = await collect(chat.message("go"));
    chat.close();
    const end = events.find((e) => e.event?.$case === "toolResultEnd");
    expect(end?.event?.$case === "toolResultEnd" && end.event.value.state).toBe(4); // DENIED
    expect(events.map(kind)).not.toContain("require_user_confirm");
    const reverted = await h.client.setMode(session.id, PermissionMode.PERMISSION_MODE_UNSPECIFIED);
    expect(reverted).toBe(PermissionMode.PERMISSION_MODE_DEFAULT);
  });

  it("shows a parked reply's status and pending calls in GetSession and ListSessions", async () => {
    h = await startHarness({
      turns: [
        { toolCalls: [{ id: "c1", name: "Bash", input: { command: "touch f && echo ok" } }] },
      ],
    });
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const started = startedCalls(await collect(chat.message("go")));
    chat.close();
    const parked = await h.client.getSession(session.id);
    expect(parked.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    expect(started).toHaveLength(1);
    expect(parked.pendingToolCalls.map((c) => c.id)).toEqual(started);
    expect(parked.pendingToolCalls[0]!.suggestedRules.length).toBeGreaterThan(0);
    expect(parked.pendingToolCalls[0]!.decision?.check).toBe("mode.default");
    const listed = await h.client.listSessions({
      status: SessionStatus.SESSION_STATUS_AWAITING_PERMISSION,
    });
    expect(listed.sessions.map((s) => s.id)).toEqual([session.id]);
  });
});
