import { existsSync } from "node:fs";
import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  AuditKind,
  createParkwayClient,
  type ParkwayClient,
  PermissionBehavior,
  PolicyResult,
  type ServerEvent,
  ToolResultState,
} from "../../src/client/index.js";
import { parseConfig } from "../../src/config/index.js";
import { type Script, startScriptedModel } from "../../src/model/scripted/index.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";
import { captureLog } from "../helpers/capture-log.js";
import { collect, toolResult } from "../helpers/parkway-harness.js";
import { type PolicyService, startPolicyService } from "../helpers/policy-service.js";

const script: Script = {
  turns: [
    {
      match: { lastUser: "^make" },
      repeat: true,
      toolCalls: [{ name: "Bash", input: { command: "mkdir -p out" } }],
    },
    { repeat: true, text: "done" },
  ],
};

/** Denies any input naming "forbidden", allows the rest. */
const decide = (body: { input: Record<string, unknown> }) =>
  JSON.stringify(body.input).includes("forbidden")
    ? { decision: "deny", reason: "no forbidden directories" }
    : { decision: "allow", reason: "fine by policy" };

let running: { parkway: RunningParkway; pdp: PolicyService; close(): Promise<void> } | undefined;
const clients: ParkwayClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await running?.close();
  running = undefined;
});

async function start() {
  const root = await mkdtemp(path.join(tmpdir(), "parkway-policy-edit-"));
  const workdir = path.join(root, "work");
  await mkdir(workdir);
  const model = await startScriptedModel({ script });
  const pdp = await startPolicyService(decide);
  const parkway = await startParkway({
    config: parseConfig({
      listen: "127.0.0.1:0",
      data: path.join(root, "data"),
      model: { url: model.url, name: "scripted", maxRetries: 0 },
      agents: [
        { id: "all", workingDirectories: [workdir], policy: { url: pdp.url, calls: "all" } },
        { id: "allowed", workingDirectories: [workdir], policy: { url: pdp.url } },
      ],
    }),
    log: captureLog(),
  });
  running = {
    parkway,
    pdp,
    async close() {
      await parkway.close();
      await pdp.close();
      await model.close();
    },
  };
  const client = createParkwayClient(parkway.address);
  clients.push(client);
  return { pdp, client };
}

function confirmRequest(events: ServerEvent[]) {
  const asked = events.flatMap((e) =>
    e.event?.$case === "requireUserConfirm" ? e.event.value.toolCalls : [],
  );
  expect(asked).toHaveLength(1);
  return asked[0]!;
}

/** Parks on the model's `mkdir -p out`, confirms it with `command` instead, reads the rest. */
async function confirmEdited(client: ParkwayClient, agentId: string, command: string) {
  const session = await client.createSession({ agentId });
  const chat = await client.attach(session.id);
  const call = confirmRequest(await collect(chat.message("make")));
  await chat.confirm(call, { editedInput: { command } });
  const rest = await collect(chat.untilSettled());
  chat.close();
  const audit = (await client.listAuditRecords({ sessionId: session.id })).records;
  const serverAudit = audit.filter((r) => r.toolCallId === call.id && r.actor === "server");
  const made = (dir: string) => existsSync(path.join(session.workingDirectories[0]!, dir));
  return { call, result: toolResult(rest, call.id), serverAudit, made };
}

describe("an input a person edited, with a policy service", () => {
  it("is judged by the service before it runs (calls: all): a DENY denies it, an ALLOW lets it run", async () => {
    const { pdp, client } = await start();

    const denied = await confirmEdited(client, "all", "mkdir -p forbidden");
    expect(denied.result).toEqual({
      text: "Permission denied: no forbidden directories",
      state: ToolResultState.TOOL_RESULT_STATE_DENIED,
    });
    expect(denied.made("forbidden")).toBe(false);
    // Asked twice: about the model's input (an ASK, which its ALLOW cannot loosen), then the edit.
    expect(pdp.requests.map((r) => [r.body.input.command, r.body.engine.behavior])).toEqual([
      ["mkdir -p out", "ask"],
      ["mkdir -p forbidden", "ask"],
    ]);
    expect(pdp.requests[1]!.body.callId).toBe(denied.call.id);
    expect(denied.serverAudit.at(-1)).toMatchObject({
      kind: AuditKind.AUDIT_KIND_DENIED_BY_CHECK,
      check: "policy",
      reason: "no forbidden directories",
      policy: {
        result: PolicyResult.POLICY_RESULT_DENY,
        engineBehavior: PermissionBehavior.PERMISSION_BEHAVIOR_ASK,
      },
    });

    const ran = await confirmEdited(client, "all", "mkdir -p elsewhere");
    expect(ran.result.state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    expect(ran.made("elsewhere")).toBe(true);
    expect(pdp.requests.at(-1)!.body.input).toEqual({ command: "mkdir -p elsewhere" });
    expect(ran.serverAudit.at(-1)).toMatchObject({
      kind: AuditKind.AUDIT_KIND_ALLOWED_BY_CHECK,
      check: "confirmation",
      policy: { result: PolicyResult.POLICY_RESULT_ALLOW, reason: "fine by policy" },
    });
  });

  it("goes to the service as a new call would (calls: allowed): only when the engine would allow it", async () => {
    const { pdp, client } = await start();

    // The engine allows a read-only command: the service is asked, and denies it.
    const read = await confirmEdited(client, "allowed", "ls forbidden");
    expect(read.result).toEqual({
      text: "Permission denied: no forbidden directories",
      state: ToolResultState.TOOL_RESULT_STATE_DENIED,
    });
    expect(pdp.requests.map((r) => [r.body.input.command, r.body.engine.behavior])).toEqual([
      ["ls forbidden", "allow"],
    ]);

    // The engine would ask about this one: the person's confirmation is the answer, as for the
    // model's own input, and the service is not asked.
    const made = await confirmEdited(client, "allowed", "mkdir -p forbidden");
    expect(made.result.state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    expect(made.made("forbidden")).toBe(true);
    expect(pdp.requests).toHaveLength(1);
  });
});
