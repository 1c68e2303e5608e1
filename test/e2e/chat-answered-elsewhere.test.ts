import { mkdtemp, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { silentLogger } from "../../src/common/logger.js";
import { parseConfig } from "../../src/config/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { ToolCallState } from "../../src/generated/parkway/v1/content.js";
import {
  type Script,
  type ScriptedModelServer,
  startScriptedModel,
} from "../../src/model/scripted/index.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";
import { confirmInput } from "../helpers/confirm-input.js";
import { HAS_TMUX, Tmux } from "../helpers/tmux.js";

/**
 * Two people on one parked reply: one in `parkway chat` on a terminal, one through another client.
 * When the other answers the call the chat is asking about, the chat says so, and what was being
 * typed for the closed prompt (a deny reason) answers nothing: not the next call's prompt (whose
 * "y" would approve it), not the input prompt (whose Enter would send the rest to the model).
 */
const SCRIPT: Script = {
  defaults: { chunkSize: 16 },
  turns: [
    {
      match: { lastUser: "^two steps$" },
      toolCalls: [{ name: "Bash", input: { command: "mkdir first-step" } }],
    },
    {
      match: { toolName: "Bash", lastToolResult: "^$|first-step" },
      toolCalls: [{ name: "Bash", input: { command: "mkdir second-step" } }],
    },
    { match: { toolName: "Bash" }, repeat: true, text: "STEP both done." },
    { match: { lastUser: "" }, repeat: true, text: "A message reached the model." },
  ],
};

describe.skipIf(!HAS_TMUX)("parkway chat when a call is answered elsewhere", () => {
  let root: string;
  let model: ScriptedModelServer;
  let parkway: RunningParkway;
  let client: ParkwayClient;
  const tmux = new Tmux();

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "parkway-chat-elsewhere-"));
    model = await startScriptedModel({ script: SCRIPT });
    parkway = await startParkway({
      config: parseConfig({
        listen: "127.0.0.1:0",
        data: path.join(root, "data"),
        model: { url: model.url, name: "scripted" },
        agents: [{ id: "test", workingDirectories: [path.join(root, "work")] }],
      }),
      log: silentLogger,
    });
    client = createParkwayClient(parkway.address);
  });

  afterAll(async () => {
    tmux.kill();
    client?.close();
    await parkway?.close();
    await model?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("says the call was answered elsewhere and lets the keys typed for it answer nothing", async () => {
    const session = await client.createSession({ agentId: "test" });
    const parked = await client.reply({
      sessionId: session.id,
      input: { $case: "userMessage", value: { text: "two steps", content: [] } },
    });
    const first = parked.pendingToolCalls[0]!;
    expect(first.input).toContain("mkdir first-step");

    tmux.start(`node bin/parkway.js chat --server ${parkway.address} --session ${session.id}`);
    await tmux.waitFor("1-4 pick", 1, 60_000);
    // The person in the chat starts to deny the first call with a reason.
    tmux.press("n");
    await tmux.waitFor("reason for the agent (optional):");
    tmux.type("m");

    // Someone else approves it meanwhile; the reply runs it and parks on the second call.
    await client.reply({ sessionId: session.id, input: confirmInput(first) });
    const screen = await tmux.waitFor("press enter to go on");
    expect(screen.replace(/\s+/g, " ")).toContain(
      "Bash mkdir first-step no longer waits (answered elsewhere, or expired): nothing was sent from here",
    );
    expect(existsSync(path.join(root, "work", session.id, "first-step"))).toBe(true);

    // The rest of the reason, typed before the person noticed: none of it answers anything.
    tmux.type("y reason");
    tmux.press("Enter");
    for (;;) {
      const now = await tmux.waitFor("command: mkdir second-step");
      if (now.split("command: mkdir second-step")[1]!.includes("1-4 pick")) break;
      await sleep(100);
    }
    const view = await client.getSession(session.id);
    expect(view.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    expect(view.pendingToolCalls.map((c) => [c.input, c.state])).toEqual([
      [JSON.stringify({ command: "mkdir second-step" }), ToolCallState.TOOL_CALL_STATE_ASKING],
    ]);
    expect(existsSync(path.join(root, "work", session.id, "second-step"))).toBe(false);

    // The second call is asked afresh, and answered here.
    tmux.press("y");
    await tmux.waitFor("STEP both done.");
    expect(existsSync(path.join(root, "work", session.id, "second-step"))).toBe(true);
    const users = model.requests.flatMap((r) => r.messages.filter((m) => m.role === "user"));
    expect(users.map((m) => JSON.stringify(m.content))).not.toContainEqual(
      expect.stringContaining("reason"),
    );
  }, 120_000);
});
