/**
 * A rule stops deciding once its removal begins: a call decided while the removal is being written
 * is asked, never allowed by the rule the audit log already shows removed. Real server and client;
 * the scripted model; the removal's write held.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditKind, PermissionBehavior, RuleScope } from "../../src/client/index.js";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";
import { type WriteFaults, writeFaults } from "../helpers/store-faults.js";

let h: Harness;
let faults: WriteFaults;
let release: (() => void) | undefined;

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
  faults = writeFaults(h.parkway.store);
});

afterAll(async () => {
  release?.();
  await h.close();
});

describe("removing a rule while a reply decides", () => {
  it("asks for a call decided while the removal is written", async () => {
    const session = await h.client.createSession({ agentId: "test" });
    const wd = session.workingDirectories[0]!;
    const added = await h.client.addRules([
      {
        toolName: "Bash",
        ruleContent: "touch:*",
        behavior: PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW,
        scope: RuleScope.RULE_SCOPE_SESSION,
        sessionId: session.id,
      },
    ]);
    const ruleId = added.rules[0]!.id;

    const hold = faults.holdNext({ synced: true });
    release = hold.release;
    const removed = h.client.removeRule(ruleId);
    await hold.held;
    const asked = h.model.requests.length;
    const replied = h.client.reply({
      sessionId: session.id,
      input: { $case: "userMessage", value: { text: "go", content: [] } },
    });
    // The model has answered with the call and the reply has decided on it (an allowed call would
    // run now: its command needs no write).
    for (let i = 0; i < 200 && h.model.requests.length === asked; i++) await sleep(10);
    expect(h.model.requests.length).toBe(asked + 1);
    await sleep(300);
    hold.release();
    release = undefined;
    await removed;

    const reply = await replied;
    expect(reply.pendingToolCalls.map((c) => c.name)).toEqual(["Bash"]);
    expect(existsSync(path.join(wd, "q.txt"))).toBe(false);
    const kinds = (await h.client.listAuditRecords({ sessionId: session.id })).records.map(
      (r) => r.kind,
    );
    expect(kinds).toContain(AuditKind.AUDIT_KIND_RULE_REMOVED);
    expect(kinds).toContain(AuditKind.AUDIT_KIND_ASKED);
    expect(kinds).not.toContain(AuditKind.AUDIT_KIND_ALLOWED_BY_RULE);
  });
});
