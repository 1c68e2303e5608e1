import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { FinishedReason } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import {
  type Script,
  startScriptedModel,
  type ScriptedModelServer,
} from "../../src/model/scripted/index.js";
import { confirmInput } from "../helpers/confirm-input.js";
import { collect, type Harness, startedCalls, startHarness } from "../helpers/parkway-harness.js";
import { type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";

/** One log line, as an object. */
type Line = Record<string, unknown> & { msg?: string; level?: unknown };

const TRACE_ID = /^[0-9a-f]{32}$/;

let h: Harness | undefined;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The harness's captured entries as log lines: the fields, `msg` and `level`. */
function lines(harness: Harness): Line[] {
  return harness.log.entries.map((e) => ({ ...e.obj, msg: e.msg, level: e.level }));
}

const replyEnd = (events: ServerEvent[]) => {
  const e = events.find((x) => x.event?.$case === "replyEnd");
  return e?.event?.$case === "replyEnd" ? e.event.value : undefined;
};

describe("log lines that join up (in-process)", () => {
  it("a model failure logs one line with its session, reply, model and code", async () => {
    h = await startHarness(
      { turns: [{ text: "x", fail: { status: 503, message: "down for now", retryAfterMs: 10 } }] },
      {},
      { model: { maxRetries: 0 } },
    );
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const events = await collect(chat.message("first"));
    chat.close();
    expect(replyEnd(events)?.finishedReason).toBe(FinishedReason.FINISHED_REASON_ERROR);
    const replyId = events[0]!.replyId;

    const failures = lines(h).filter((l) => l.msg === "model call failed");
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      level: "warn",
      session: session.id,
      reply: replyId,
      agent: "test",
      model: "scripted",
      code: "model_status",
    });
    expect(failures[0]!.error).toMatch(/503/);
    // Tracing is off: no trace id, and nothing else about the reply at warn or error.
    expect(failures[0]).not.toHaveProperty("trace_id");
    const loud = lines(h).filter(
      (l) => l.reply === replyId && (l.level === "warn" || l.level === "error"),
    );
    expect(loud).toHaveLength(1);
  });

  it("a refused input logs one line with its session, request id, kind and code", async () => {
    const script: Script = {
      turns: [
        {
          match: { lastUser: "go" },
          toolCalls: [{ id: "c1", name: "Bash", input: { command: "touch made.txt" } }],
        },
        { match: { toolName: "Bash" }, text: "done" },
      ],
    };
    h = await startHarness(script);
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const parked = await collect(chat.message("go"));
    expect(parked.at(-1)?.event?.$case).toBe("replyParked");
    const replyId = parked[0]!.replyId;
    const [call] = startedCalls(parked);

    // Over Chat: a confirmation for a call the reply did not make.
    await expect(chat.send(confirmInput("nope"), "req-unknown")).rejects.toThrow(/nope/);
    // Denied for real, then the same request id reused for another input over the unary Reply.
    await chat.send(confirmInput(call!, false), "req-deny");
    expect(replyEnd(await collect(chat.untilSettled()))).toBeDefined();
    chat.close();
    await expect(
      h.client.reply({
        sessionId: session.id,
        requestId: "req-deny",
        input: { $case: "userMessage", value: { text: "something else", content: [] } },
      }),
    ).rejects.toThrow(/request_id/);

    const unknown = lines(h).filter((l) => JSON.stringify(l).includes("req-unknown"));
    expect(unknown).toHaveLength(1);
    expect(unknown[0]).toMatchObject({
      level: "info",
      msg: "input refused",
      method: "Chat",
      session: session.id,
      requestId: "req-unknown",
      input: "user_confirm_result",
      code: "NOT_FOUND",
      reason: "TOOL_CALL_NOT_FOUND",
    });
    expect(unknown[0]!.error).toMatch(/nope/);

    const reused = lines(h).filter((l) => JSON.stringify(l).includes("req-deny"));
    expect(reused).toHaveLength(1);
    expect(reused[0]).toMatchObject({
      level: "info",
      msg: "input refused",
      method: "Reply",
      session: session.id,
      requestId: "req-deny",
      input: "user_message",
      code: "INVALID_ARGUMENT",
    });
    expect(reused[0]!.fieldViolations).toEqual([expect.objectContaining({ field: "request_id" })]);
    // The adapter does not log the Reply's refusal a second time, at any level.
    expect(lines(h).filter((l) => String(l.msg).startsWith("handler "))).toEqual([]);
    // The reply the refusals were about is never named by a line at warn or error.
    const loud = lines(h).filter(
      (l) => l.reply === replyId && (l.level === "warn" || l.level === "error"),
    );
    expect(loud).toEqual([]);
  });
});

/** An OTLP/HTTP collector that takes every export (200) and keeps nothing. */
async function collector(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, server };
}

/** The JSON log lines a spawned server wrote. */
function parsed(server: SpawnedServer): Line[] {
  return server.output.flatMap((line) => {
    try {
      const value = JSON.parse(line) as Line | null;
      return typeof value === "object" && value !== null ? [value] : [];
    } catch {
      return [];
    }
  });
}

/** Reads a Chat stream until `until` holds for an event; returns the events read. */
async function readUntil(
  chat: { next(signal?: AbortSignal): Promise<ServerEvent | undefined> },
  until: (e: ServerEvent) => boolean,
): Promise<ServerEvent[]> {
  const seen: ServerEvent[] = [];
  for (;;) {
    const e = await chat.next(AbortSignal.timeout(10_000));
    if (!e) throw new Error(`the stream ended after ${seen.length} events`);
    seen.push(e);
    if (until(e)) return seen;
  }
}

describe("log lines that join up (a traced server in its own process)", () => {
  it("model failures carry the trace id; a crash's recovered replies log once each", async () => {
    const otlp = await collector();
    cleanups.push(() => new Promise((resolve) => otlp.server.close(resolve)));
    const model: ScriptedModelServer = await startScriptedModel({
      script: {
        turns: [
          { match: { lastUser: "fail" }, text: "x", fail: { status: 503, retryAfterMs: 10 } },
          // The model never answers: the reply runs until the server is killed.
          { match: { lastUser: "hang" }, repeat: true, text: "x", fail: { stall: true } },
        ],
      },
    });
    cleanups.push(() => model.close());
    const root = await tempDir("parkway-logs-");
    const config = path.join(root, "parkway.json");
    await writeFile(
      config,
      JSON.stringify({
        model: { url: model.url, name: "scripted", maxRetries: 0 },
        agents: [{ id: "test", workingDirectories: [path.join(root, "work")] }],
      }),
    );
    const env = {
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: "100",
    };
    const launch = () =>
      spawnServer({
        dataDir: path.join(root, "data"),
        direct: true,
        args: ["--config", config],
        env,
      });
    let server = await launch();
    let client: ParkwayClient = createParkwayClient(server.address);
    cleanups.push(async () => {
      client.close();
      await server.stop();
    });

    // (d) A model failure, traced: one line, with the reply's trace id.
    const failing = await client.createSession({ agentId: "test" });
    const chat = await client.attach(failing.id);
    const events = await collect(chat.message("fail"));
    expect(replyEnd(events)?.error?.code).toBe("model_status");
    // A refused input over the traced Chat carries the call's trace id.
    await expect(chat.send(confirmInput("nope"), "req-traced")).rejects.toThrow();
    chat.close();
    await expect.poll(() => parsed(server).some((l) => l.requestId === "req-traced")).toBe(true);
    const failures = parsed(server).filter((l) => l.msg === "model call failed");
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      session: failing.id,
      reply: events[0]!.replyId,
      model: "scripted",
      code: "model_status",
    });
    expect(failures[0]!.trace_id).toMatch(TRACE_ID);
    const refused = parsed(server).filter((l) => l.requestId === "req-traced");
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ msg: "input refused", session: failing.id });
    expect(refused[0]!.trace_id).toMatch(TRACE_ID);

    // (c) Two replies running (each waiting for the model) when the server is killed.
    const running = new Map<string, string>();
    for (let i = 0; i < 2; i++) {
      const session = await client.createSession({ agentId: "test" });
      const stream = await client.attach(session.id);
      await stream.send({ $case: "userMessage", value: { text: "hang", content: [] } });
      const seen = await readUntil(stream, (e) => e.event?.$case === "modelCallStart");
      running.set(session.id, seen.at(-1)!.replyId);
      stream.close();
    }
    client.close();
    const exited = new Promise((resolve) => server.child.once("exit", resolve));
    process.kill(-server.child.pid!, "SIGKILL");
    await exited;
    server = await launch();
    client = createParkwayClient(server.address);

    const recovered = parsed(server).filter(
      (l) => l.msg === "ended a reply that was running at the last stop",
    );
    expect(recovered).toHaveLength(2);
    for (const line of recovered) {
      expect(running.get(line.session as string)).toBe(line.reply);
      expect(line).toMatchObject({ level: 30, agent: "test", doing: "model_call" });
      expect(line.trace_id).toMatch(TRACE_ID);
    }
    expect(new Set(recovered.map((l) => l.session)).size).toBe(2);
    const summary = parsed(server).filter(
      (l) => l.msg === "ended replies that were running at the last stop",
    );
    expect(summary).toMatchObject([{ recovered: 2 }]);
    // The recovered replies ended as interrupted by the restart.
    for (const [sessionId] of running) {
      const view = await client.getSession(sessionId);
      expect(view.replyId).toBe("");
    }
  });
});
