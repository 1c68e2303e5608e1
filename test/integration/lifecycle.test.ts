import { existsSync } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { connect, createServer } from "node:net";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import {
  createParkwayClient,
  type ParkwayClient,
  type ParkwaySession,
} from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import {
  type Script,
  startScriptedModel,
  type ScriptedModelServer,
} from "../../src/model/scripted/index.js";
import { healthCheck } from "../helpers/grpc-tools.js";
import { collect, kind } from "../helpers/parkway-harness.js";
import { runServe, type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";

/** A scripted model, a config file naming it, and a data directory kept across restarts. */
interface Setup {
  root: string;
  config: string;
  dataDir: string;
  model: ScriptedModelServer;
  server?: SpawnedServer;
  client?: ParkwayClient;
}

let setup: Setup | undefined;
afterEach(async () => {
  setup?.client?.close();
  await setup?.server?.stop();
  await setup?.model.close();
  setup = undefined;
});

async function prepare(script: Script, config: Record<string, unknown> = {}): Promise<Setup> {
  const root = await tempDir("parkway-lifecycle-");
  const model = await startScriptedModel({ script });
  const file = path.join(root, "parkway.json");
  await writeFile(
    file,
    JSON.stringify({
      model: { url: model.url, name: "scripted", maxRetries: 0 },
      agents: [{ id: "test", workingDirectories: [path.join(root, "work")] }],
      ...config,
    }),
  );
  return { root, config: file, dataDir: path.join(root, "data"), model };
}

function launch(s: Setup, listen?: string): Promise<SpawnedServer> {
  return spawnServer({
    dataDir: s.dataDir,
    args: ["--config", s.config, ...(listen ? ["--listen", listen] : [])],
    direct: true,
  });
}

/** A port that is free now. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Reads events until one matches; returns every event read. */
async function until(
  chat: ParkwaySession,
  match: (e: ServerEvent) => boolean,
): Promise<ServerEvent[]> {
  const seen: ServerEvent[] = [];
  for (;;) {
    const e = await chat.next(AbortSignal.timeout(20_000));
    if (!e) throw new Error(`stream ended before the event: ${seen.map(kind).join(", ")}`);
    seen.push(e);
    if (match(e)) return seen;
  }
}

/** Reads the rest of a stream; resolves with its events and how it ended. */
async function drain(chat: ParkwaySession): Promise<{ events: ServerEvent[]; ended: string }> {
  const events: ServerEvent[] = [];
  try {
    for (;;) {
      const e = await chat.next(AbortSignal.timeout(30_000));
      if (!e) return { events, ended: "end" };
      events.push(e);
    }
  } catch (err) {
    return { events, ended: (err as { codeName?: string }).codeName ?? String(err) };
  }
}

function toolResultEnd(events: ServerEvent[], callId: string) {
  for (const e of events) {
    if (e.event?.$case === "toolResultEnd" && e.event.value.toolCallId === callId) {
      return e.event.value;
    }
  }
  return undefined;
}

function replyEnd(events: ServerEvent[]) {
  const e = events.find((x) => x.event?.$case === "replyEnd");
  return e?.event?.$case === "replyEnd" ? e.event.value : undefined;
}

function requireConfirm(events: ServerEvent[]) {
  const e = events.find((x) => x.event?.$case === "requireUserConfirm");
  const call = e?.event?.$case === "requireUserConfirm" ? e.event.value.toolCalls[0] : undefined;
  if (!call) throw new Error(`no REQUIRE_USER_CONFIRM in ${events.map(kind).join(", ")}`);
  return call;
}

/** The server's output says nothing of writes after the store closed or of unhandled rejections. */
function expectCleanOutput(output: string[]): void {
  const text = output.join("\n");
  expect(text).not.toMatch(/Database is not open/i);
  expect(text).not.toMatch(/unhandled/i);
  expect(text).not.toMatch(/"level":50/);
}

/** The events of a session from its first, after a restart. */
async function storedEvents(client: ParkwayClient, sessionId: string): Promise<ServerEvent[]> {
  const session = await client.getSession(sessionId);
  const chat = await client.attach(sessionId, { reconnectForMs: 0 });
  const events = await until(chat, (e) => e.seq === session.lastSeq);
  chat.close();
  return events;
}

describe("shutdown in order", () => {
  it("refuses a confirm sent after SIGTERM, lets the running tool finish, records it finished, exits 0", async () => {
    setup = await prepare({
      turns: [
        {
          match: { lastUser: "^slow" },
          toolCalls: [
            { id: "slow", name: "Bash", input: { command: "sleep 1; echo done > marker.txt" } },
          ],
        },
        {
          match: { lastUser: "^ask" },
          toolCalls: [{ id: "ask", name: "Bash", input: { command: "echo yes > confirmed.txt" } }],
        },
        { match: { lastToolResult: "" }, repeat: true, text: "Done." },
      ],
    });
    const s = setup;
    s.server = await launch(s);
    s.client = createParkwayClient(s.server.address);
    const running = await s.client.createSession({ agentId: "test" });
    const parked = await s.client.createSession({ agentId: "test" });
    const a = await s.client.attach(running.id, { reconnectForMs: 0 });
    const b = await s.client.attach(parked.id, { reconnectForMs: 0 });
    const slow = requireConfirm(await collect(a.message("slow")));
    const ask = requireConfirm(await collect(b.message("ask")));

    await a.confirm(slow);
    await until(a, (e) => e.event?.$case === "toolResultStart");
    const stopping = s.server.stop(30_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const refused = await b.confirm(ask).then(
      () => undefined,
      (err: unknown) => err as { codeName?: string; message?: string },
    );
    expect(refused?.codeName).toBe("UNAVAILABLE");
    expect(refused?.message).toMatch(/server shutting down/);

    const rest = await drain(a);
    const code = await stopping;
    expect(code).toBe(0);
    expectCleanOutput(s.server.output);
    expect(rest.ended).toBe("UNAVAILABLE");
    expect(toolResultEnd(rest.events, slow.id)?.state).toBe(
      ToolResultState.TOOL_RESULT_STATE_SUCCESS,
    );
    const end = replyEnd(rest.events);
    expect(end?.finishedReason).toBe(2); // interrupted
    expect(end?.error?.code).toBe("server_shutdown");
    expect(existsSync(path.join(running.workingDirectories[0]!, "marker.txt"))).toBe(true);
    expect(existsSync(path.join(parked.workingDirectories[0]!, "confirmed.txt"))).toBe(false);
    b.close();
    a.close();

    // After a restart: the finished tool is recorded finished, the parked call still waits.
    s.client.close();
    s.server = await launch(s);
    s.client = createParkwayClient(s.server.address);
    const after = await s.client.getSession(running.id);
    expect(after.status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    const stored = await storedEvents(s.client, running.id);
    // The log is gap-free and ends where the stream ended.
    expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
    expect(stored.at(-1)?.seq).toBe(rest.events.filter((e) => e.seq > 0).at(-1)?.seq);
    expect(toolResultEnd(stored, slow.id)?.state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    expect(replyEnd(stored)?.error?.code).toBe("server_shutdown");
    const waiting = await s.client.getSession(parked.id);
    expect(waiting.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    expect(waiting.pendingToolCalls.map((c) => c.id)).toEqual([ask.id]);
  });

  it("records a tool that outlives shutdownGrace as interrupted, and exits 0", async () => {
    setup = await prepare(
      {
        turns: [
          {
            match: { lastUser: "^slow" },
            toolCalls: [
              { id: "slow", name: "Bash", input: { command: "sleep 5; echo late > late.txt" } },
            ],
          },
          { match: { lastToolResult: "" }, repeat: true, text: "Done." },
        ],
      },
      { shutdownGrace: "300ms" },
    );
    const s = setup;
    s.server = await launch(s);
    s.client = createParkwayClient(s.server.address);
    const session = await s.client.createSession({ agentId: "test" });
    const chat = await s.client.attach(session.id, { reconnectForMs: 0 });
    const slow = requireConfirm(await collect(chat.message("slow")));
    await chat.confirm(slow);
    await until(chat, (e) => e.event?.$case === "toolResultStart");
    const started = Date.now();
    const stopping = s.server.stop(30_000);
    const rest = await drain(chat);
    const code = await stopping;
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(4000);
    expectCleanOutput(s.server.output);
    const end = toolResultEnd(rest.events, slow.id);
    expect(end?.state).toBe(ToolResultState.TOOL_RESULT_STATE_INTERRUPTED);
    expect(replyEnd(rest.events)?.finishedReason).toBe(2);
    chat.close();

    s.client.close();
    s.server = await launch(s);
    s.client = createParkwayClient(s.server.address);
    const stored = await storedEvents(s.client, session.id);
    expect(toolResultEnd(stored, slow.id)?.state).toBe(
      ToolResultState.TOOL_RESULT_STATE_INTERRUPTED,
    );
    const text = stored
      .map((e) => (e.event?.$case === "toolResultTextDelta" ? e.event.value.delta : ""))
      .join("");
    expect(text).toContain("interrupted because the server shut down");
    await new Promise((resolve) => setTimeout(resolve, 5000 - (Date.now() - started)));
    expect(existsSync(path.join(session.workingDirectories[0]!, "late.txt"))).toBe(false);
  });
});

describe("start in order", () => {
  it("answers UNAVAILABLE, never INTERNAL, while it recovers the replies a crash cut short", async () => {
    const replies = 600;
    setup = await prepare(
      {
        turns: [{ text: "x".repeat(200), chunkSize: 1, delayMs: 100, repeat: true }],
      },
      { limits: { runningReplies: 10_000 } },
    );
    const s = setup;
    const port = await freePort();
    const address = `127.0.0.1:${port}`;
    s.server = await launch(s, address);
    s.client = createParkwayClient(address);
    const client = s.client;
    const ids: string[] = [];
    for (let i = 0; i < replies; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, replies - i) }, () =>
          client.createSession({ agentId: "test" }),
        ),
      );
      ids.push(...batch.map((x) => x.id));
    }
    for (const id of ids) {
      void client
        .reply({
          sessionId: id,
          input: { $case: "userMessage", value: { text: "talk", content: [] } },
        })
        .catch(() => undefined);
    }
    await expect
      .poll(async () => (await client.getSession(ids.at(-1)!)).status, { timeout: 30_000 })
      .toBe(SessionStatus.SESSION_STATUS_RUNNING);
    client.close();
    process.kill(-s.server.child.pid!, "SIGKILL");
    await new Promise((resolve) => s.server!.child.once("exit", resolve));

    const restarting = launch(s, address);
    // Once the port accepts connections, call it until it serves.
    for (;;) {
      const open = await new Promise<boolean>((resolve) => {
        const socket = connect(port, "127.0.0.1");
        socket.once("connect", () => {
          socket.destroy();
          resolve(true);
        });
        socket.once("error", () => resolve(false));
      });
      if (open) break;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const probe = createParkwayClient(address);
    const outcomes: string[] = [];
    const health: string[] = [];
    for (;;) {
      health.push(await healthCheck(address).catch((err: Error) => `error: ${err.message}`));
      const outcome = await probe.getSession(ids[0]!).then(
        () => "OK",
        (err: { codeName?: string; message?: string }) => `${err.codeName}: ${err.message}`,
      );
      outcomes.push(outcome);
      if (outcome === "OK") break;
    }
    probe.close();
    s.server = await restarting;
    s.client = createParkwayClient(address);
    expect(outcomes.filter((o) => /INTERNAL/.test(o))).toEqual([]);
    expect(outcomes.filter((o) => o !== "OK").every((o) => o.startsWith("UNAVAILABLE"))).toBe(true);
    expect(outcomes).toContain("UNAVAILABLE: server starting");
    expect(health).toContain("NOT_SERVING");
    // Health said NOT_SERVING before every call that was refused (each round asks health first).
    expect(health.filter((h, i) => outcomes[i] !== "OK" && h !== "NOT_SERVING")).toEqual([]);
    expect(await healthCheck(address)).toBe("SERVING");
    // Recovery finished before the first call was served.
    const first = await s.client.getSession(ids[0]!);
    expect(first.status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    expectCleanOutput(s.server.output);
  }, 120_000);

  it("exits non-zero with one line naming the path and errno when the data directory cannot be created", async () => {
    const root = await tempDir("parkway-lifecycle-");
    const file = path.join(root, "a-file");
    await writeFile(file, "not a directory");
    const data = path.join(file, "data");
    const run = await runServe(["--listen", "127.0.0.1:0", "--data", data]);
    expect(run.code).not.toBe(0);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toEqual([
      `parkway: cannot use data directory ${data}: ${file}: not a directory (ENOTDIR)`,
    ]);
  });

  it("exits non-zero with one line naming the store, the file and errno when its marker cannot be written", async () => {
    const data = await tempDir("parkway-lifecycle-");
    // Opening a new store writes its marker through a temporary file: a directory is in the way.
    const blocker = path.join(data, "parkway-store.json.tmp");
    await mkdir(blocker);
    const run = await runServe(["--listen", "127.0.0.1:0", "--data", data]);
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split("\n")).toEqual([
      `parkway: cannot open the store in ${data}: illegal operation on a directory (EISDIR, open ${blocker})`,
    ]);
  });

  it("exits non-zero with one line naming the path and errno on a read-only filesystem", async (ctx) => {
    const root = await tempDir("parkway-lifecycle-");
    const mount = path.join(root, "ro");
    await mkdir(mount);
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", mount], {
        stdio: "ignore",
      });
    } catch {
      ctx.skip("cannot mount a read-only tmpfs here (needs root and CAP_SYS_ADMIN)");
    }
    try {
      const run = await runServe(["--listen", "127.0.0.1:0", "--data", mount]);
      expect(run.code).not.toBe(0);
      const lines = run.stderr.trim().split("\n");
      expect(lines).toEqual([
        `parkway: cannot use data directory ${mount}: cannot create a file in it: read-only file system (EROFS)`,
      ]);
    } finally {
      execFileSync("umount", [mount]);
    }
  });

  it("exits non-zero with one line naming the address when the port is in use", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const address = `127.0.0.1:${(holder.address() as { port: number }).port}`;
    try {
      const data = path.join(await tempDir("parkway-lifecycle-"), "data");
      const run = await runServe(["--listen", address, "--data", data]);
      expect(run.code).not.toBe(0);
      expect(run.stderr.trim().split("\n")).toEqual([
        `parkway: cannot listen on ${address}: address in use (EADDRINUSE)`,
      ]);
      // The data directory was not touched.
      expect(existsSync(data)).toBe(false);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it("exits as for the gRPC port, with one line naming the address, when the metrics port is in use", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const address = `127.0.0.1:${(holder.address() as { port: number }).port}`;
    try {
      const data = path.join(await tempDir("parkway-lifecycle-"), "data");
      const grpc = await runServe(["--listen", address, "--data", data]);
      const run = await runServe([
        "--listen",
        "127.0.0.1:0",
        "--metrics-listen",
        address,
        "--data",
        data,
      ]);
      expect(run.code).not.toBe(0);
      expect(run.code).toBe(grpc.code);
      expect(run.stderr.trim().split("\n")).toEqual([
        `parkway: cannot listen on ${address}: address in use (EADDRINUSE)`,
      ]);
      expect(existsSync(data)).toBe(false);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it("refuses a directory of other files that holds no Parkway store, and creates nothing in it", async () => {
    const data = await tempDir("parkway-lifecycle-");
    await writeFile(path.join(data, "notes.txt"), "mine");
    await mkdir(path.join(data, "sub"));
    const run = await runServe(["--listen", "127.0.0.1:0", "--data", data]);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split("\n")).toEqual([
      `parkway: cannot use data directory ${data}: it is not empty (notes.txt, sub/) and holds no Parkway store; give a new or empty directory, or one a Parkway server made (ENOTEMPTY)`,
    ]);
    expect((await readdir(data)).sort()).toEqual(["notes.txt", "sub"]);
  });

  it("takes an empty directory (hidden files and lost+found aside), and the store it made there at the next start", async () => {
    const data = await tempDir("parkway-lifecycle-");
    await writeFile(path.join(data, ".gitkeep"), "");
    await mkdir(path.join(data, "lost+found"));
    for (let start = 0; start < 2; start++) {
      const server = await spawnServer({ dataDir: data, direct: true });
      expect(await server.stop()).toBe(0);
    }
    expect(await readdir(data)).toContain("parkway-store.json");
  });
});
