import { existsSync } from "node:fs";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createParkwayClient,
  type ParkwayClient,
  ParkwayClientError,
} from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { ToolCallState } from "../../src/generated/parkway/v1/content.js";
import { startScriptedModel, type ScriptedModelServer } from "../../src/model/scripted/index.js";
import { EXIT_STORAGE_FAILURE } from "../../src/runtime/start-parkway.js";
import { type SpawnedServer, spawnServer } from "../helpers/spawn-server.js";
import { mountSmallDisk, type SmallDisk } from "../helpers/store-faults.js";
import { confirmInput } from "../helpers/confirm-input.js";

let disk: SmallDisk | undefined;
let skipped = "";
let model: ScriptedModelServer | undefined;
let server: SpawnedServer | undefined;
let client: ParkwayClient | undefined;

beforeAll(async () => {
  const mounted = await mountSmallDisk("2m");
  if ("skipped" in mounted) skipped = mounted.skipped;
  else disk = mounted;
});

afterAll(async () => {
  client?.close();
  await server?.stop();
  await model?.close();
  await disk?.unmount();
});

const message = (text: string) => ({
  $case: "userMessage" as const,
  value: { text, content: [] },
});

describe("a full disk (tmpfs) under the real server", () => {
  it("exits with 75 after ENOSPC, and a restart on the freed disk has every acknowledged write", async (ctx) => {
    if (!disk) {
      console.warn(`skipped: ${skipped}`);
      ctx.skip();
      return;
    }
    const root = await mkdtemp(path.join(tmpdir(), "parkway-full-"));
    const workdir = path.join(root, "work");
    const effects = path.join(workdir, "effects.txt");
    model = await startScriptedModel({
      script: {
        turns: [
          {
            match: { lastUser: "^go " },
            repeat: true,
            toolCalls: [
              { name: "Bash", input: { command: 'echo "{{last_user}}" >> effects.txt' } },
            ],
          },
          { match: { toolName: "Bash" }, repeat: true, text: "ok" },
        ],
      },
    });
    const config = path.join(root, "parkway.json");
    await writeFile(
      config,
      JSON.stringify({
        model: { url: model.url, name: "scripted", maxRetries: 0 },
        agents: [{ id: "test", workingDirectories: [workdir], shareWorkingDirectories: true }],
      }),
    );
    const dataDir = path.join(disk.dir, "data");
    const launch = async () => {
      server = await spawnServer({ dataDir, args: ["--config", config] });
      client = createParkwayClient(server.address, { timeoutMs: 10_000 });
      return client;
    };

    let c = await launch();
    // A reply that completes after a confirmation, and one left parked.
    const done = await c.createSession({ agentId: "test" });
    const first = await c.reply({ sessionId: done.id, requestId: "m1", input: message("go 1") });
    await c.reply({
      sessionId: done.id,
      requestId: "c1",
      input: confirmInput(first.pendingToolCalls[0]!),
    });
    const parked = await c.createSession({ agentId: "test" });
    const waiting = await c.reply({ sessionId: parked.id, input: message("go 2") });
    const parkedCall = waiting.pendingToolCalls[0]!;

    // Fill the disk, then create sessions until a write fails.
    await disk.fill();
    const created: string[] = [];
    let refusal: unknown;
    for (let i = 0; i < 2000 && refusal === undefined; i++) {
      await c.createSession({ agentId: "test" }).then(
        (s) => created.push(s.id),
        (err: unknown) => (refusal = err),
      );
    }
    expect(refusal).toBeInstanceOf(ParkwayClientError);
    expect((refusal as ParkwayClientError).codeName).toBe("UNAVAILABLE");
    expect((refusal as ParkwayClientError).message).toContain(
      "storage failed (IO error: No space left on device)",
    );

    // Space comes back, but this process writes nothing more: the answer is not acknowledged.
    await disk.free();
    const late = await c.reply({ sessionId: parked.id, input: confirmInput(parkedCall) }).then(
      () => "acknowledged",
      (err: unknown) => (err as ParkwayClientError).codeName,
    );
    expect(late).toBe("UNAVAILABLE");

    const code = await new Promise<number | null>((resolve) => {
      if (server!.child.exitCode !== null) resolve(server!.child.exitCode);
      else server!.child.once("exit", (exit) => resolve(exit));
    });
    expect(code).toBe(EXIT_STORAGE_FAILURE);
    const output = server!.output.join("\n");
    expect(output.match(/storage failed: every write is refused/g)).toHaveLength(1);
    expect(output).toContain("No space left on device");
    expect(output).not.toMatch(/unhandled|uncaught/i);
    c.close();

    // Started again on the same, freed, disk: every acknowledged write is there.
    c = await launch();
    const finished = await c.getSession(done.id);
    expect(finished.status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    expect(finished.pendingToolCalls).toEqual([]);
    const still = await c.getSession(parked.id);
    expect(still.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    expect(still.pendingToolCalls.map((call) => [call.id, call.state])).toEqual([
      [parkedCall.id, ToolCallState.TOOL_CALL_STATE_ASKING],
    ]);
    for (const id of created) expect((await c.getSession(id)).id).toBe(id);
    // The confirmed call ran once and is not asked again.
    expect(await readFile(effects, "utf8")).toBe("go 1\n");
    await c.reply({ sessionId: parked.id, input: confirmInput(parkedCall) });
    expect(await readFile(effects, "utf8")).toBe("go 1\ngo 2\n");
    c.close();
    await server!.stop();

    c = await launch();
    expect((await c.getSession(parked.id)).status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    expect((await c.getSession(done.id)).status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    expect(existsSync(effects) && (await readFile(effects, "utf8"))).toBe("go 1\ngo 2\n");
  }, 120_000);
});
