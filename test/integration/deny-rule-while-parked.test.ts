/**
 * A deny rule added while a call waits for its confirmation holds: confirming the call is refused
 * (FAILED_PRECONDITION naming the rule), nothing runs, and the person can still deny it. Real
 * server and client; the scripted model.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ParkwayClientError } from "../../src/client/index.js";
import { confirmation, denial } from "../../src/client/inputs.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { PermissionBehavior, RuleScope } from "../../src/generated/parkway/v1/permission.js";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    turns: [
      {
        match: { lastUser: "^go" },
        repeat: true,
        toolCalls: [{ name: "Bash", input: { command: "touch q.txt" } }],
      },
      { match: { toolName: "Bash" }, repeat: true, text: "done" },
    ],
  });
});

afterAll(async () => {
  await h.close();
});

describe("a deny rule added while a call is parked", () => {
  it("refuses the call's confirmation; nothing runs; a denial still ends it", async () => {
    const session = await h.client.createSession({ agentId: "test" });
    const wd = session.workingDirectories[0]!;
    const parked = await h.client.reply({
      sessionId: session.id,
      input: { $case: "userMessage", value: { text: "go", content: [] } },
    });
    const call = parked.pendingToolCalls[0]!;
    await h.client.addRules([
      {
        toolName: "Bash",
        ruleContent: "touch:*",
        behavior: PermissionBehavior.PERMISSION_BEHAVIOR_DENY,
        scope: RuleScope.RULE_SCOPE_SESSION,
        sessionId: session.id,
      },
    ]);
    const refused = await h.client
      .send(session.id, {
        $case: "userConfirmResult",
        value: { replyId: "", confirmResults: [confirmation(call)] },
      })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refused).toBeInstanceOf(ParkwayClientError);
    expect((refused as ParkwayClientError).codeName).toBe("FAILED_PRECONDITION");
    expect((refused as ParkwayClientError).message).toContain("denied by rule Bash(touch:*)");
    const still = await h.client.getSession(session.id);
    expect(still.pendingToolCalls.map((c) => c.id)).toEqual([call.id]);
    expect(existsSync(path.join(wd, "q.txt"))).toBe(false);

    await h.client.send(session.id, {
      $case: "userConfirmResult",
      value: { replyId: "", confirmResults: [denial(call, "the rule says no")] },
    });
    for (let i = 0; i < 200; i++) {
      if ((await h.client.getSession(session.id)).status === SessionStatus.SESSION_STATUS_IDLE) {
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect((await h.client.getSession(session.id)).status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    expect(existsSync(path.join(wd, "q.txt"))).toBe(false);
  });
});
