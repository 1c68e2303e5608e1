import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import { startScriptedModel, type ScriptedModelServer } from "../../src/model/scripted/index.js";
import { collect, kind, startedCalls, toolResult } from "../helpers/parkway-harness.js";
import { REPO_ROOT, type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";

const FS_SERVER = path.join(
  REPO_ROOT,
  "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
);

let model: ScriptedModelServer | undefined;
let server: SpawnedServer | undefined;
let client: ParkwayClient | undefined;
afterEach(async () => {
  client?.close();
  await server?.stop();
  await model?.close();
  client = undefined;
  server = undefined;
  model = undefined;
});

describe("a parked MCP call", () => {
  it("survives a SIGKILL of Parkway and runs exactly once when confirmed after the restart", async () => {
    const root = await tempDir("parkway-mcp-restart-");
    const workdir = path.join(root, "work");
    await mkdir(workdir);
    const file = path.join(workdir, "count.txt");
    await writeFile(file, "count:\n");
    model = await startScriptedModel({
      script: {
        turns: [
          {
            match: { lastUser: "edit" },
            toolCalls: [
              {
                name: "mcp__fs__edit_file",
                input: { path: file, edits: [{ oldText: "count:", newText: "count:x" }] },
              },
            ],
          },
          { match: { toolName: "mcp__fs__edit_file" }, text: "edited" },
        ],
      },
    });
    const config = path.join(root, "parkway.json");
    await writeFile(
      config,
      JSON.stringify({
        model: { url: model.url, name: "scripted", maxRetries: 0 },
        agents: [
          {
            id: "test",
            workingDirectories: [workdir],
            shareWorkingDirectories: true,
            mcpServers: {
              fs: {
                command: process.execPath,
                args: [FS_SERVER, workdir],
                // Marks the process for the test's leak check.
                env: { PARKWAY_TEST_FILE: process.env.PARKWAY_TEST_FILE ?? "" },
              },
            },
          },
        ],
      }),
    );
    const dataDir = path.join(root, "data");
    const launch = () => spawnServer({ dataDir, direct: true, args: ["--config", config] });
    server = await launch();
    client = createParkwayClient(server.address);

    const session = await client.createSession({ agentId: "test" });
    const chat = await client.attach(session.id);
    const before = await collect(chat.message("edit"));
    chat.close();
    expect(before.map(kind).slice(-2)).toEqual(["require_user_confirm", "reply_parked"]);
    const [callId] = startedCalls(before);

    // SIGKILL the server's process group: Parkway and its MCP server die at once.
    client.close();
    process.kill(-server.child.pid!, "SIGKILL");
    await new Promise((resolve) => server!.child.once("exit", resolve));
    server = await launch();
    client = createParkwayClient(server.address);

    const parked = await client.getSession(session.id);
    expect(parked.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    expect(parked.pendingToolCalls.map((c) => c.name)).toEqual(["mcp__fs__edit_file"]);
    expect(await readFile(file, "utf8")).toBe("count:\n");

    const again = await client.attach(session.id, { afterSeq: parked.lastSeq });
    await again.confirm(parked.pendingToolCalls[0]!);
    const after = await collect(again.untilSettled());
    again.close();
    const result = toolResult(after, callId!);
    expect(result.state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    expect(result.text).toContain("+count:x");
    expect(after.filter((e) => e.event?.$case === "toolResultEnd")).toHaveLength(1);
    const end = after.findLast((e) => e.event?.$case === "replyEnd");
    expect(end?.event?.$case === "replyEnd" && end.event.value.finishedReason).toBe(1);
    // Once: a second run would have made it count:xx.
    expect(await readFile(file, "utf8")).toBe("count:x\n");
  });
});
