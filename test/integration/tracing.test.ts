import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { confirmation } from "../../src/client/inputs.js";
import type { ScriptedModelServer } from "../../src/model/scripted/index.js";
import { collect } from "../helpers/parkway-harness.js";
import { prepareAgent } from "../helpers/process-harness.js";
import {
  type OtlpReceiver,
  type ReceivedSpan,
  startOtlpReceiver,
} from "../helpers/otlp-receiver.js";
import { type SpawnedServer, spawnServer } from "../helpers/spawn-server.js";

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
  cleanup = [];
});

/** Parkway in its own process, its agent on a scripted model, with `env`; stopped after the test. */
async function serverWith(env: Record<string, string>): Promise<{
  server: SpawnedServer;
  model: ScriptedModelServer;
}> {
  const { root, model, config } = await prepareAgent("parkway-trace-", () => ({}));
  cleanup.push(() => model.close());
  const server = await spawnServer({
    dataDir: path.join(root, "data"),
    direct: true,
    args: ["--config", config],
    env,
  });
  cleanup.push(async () => void (await server.stop()));
  return { server, model };
}

/** Parkway in its own process, exporting spans to `receiver` over OTLP/HTTP JSON. */
function tracedServer(receiver: OtlpReceiver) {
  return serverWith({
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: "50",
    OTEL_SERVICE_NAME: "parkway-under-test",
  });
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

function one(spans: ReceivedSpan[], pick: (s: ReceivedSpan) => boolean, what: string) {
  const found = spans.filter(pick);
  expect(found, what).toHaveLength(1);
  return found[0]!;
}

describe("traces", () => {
  it("makes one confirm flow a tree under the caller's span: reply, model calls, tool call, park", async () => {
    const receiver = await startOtlpReceiver();
    cleanup.push(() => receiver.close());
    const { server, model } = await tracedServer(receiver);
    await model.reset({
      turns: [
        {
          toolCalls: [{ name: "Bash", input: { command: "touch traced.txt" } }],
          usage: { prompt_tokens: 120, completion_tokens: 12, cached_tokens: 30 },
        },
        { text: "done", usage: { prompt_tokens: 150, completion_tokens: 3, cached_tokens: 0 } },
      ],
    });
    // The caller's own span, as its tracer would send it.
    const traceId = hex(16);
    const callerSpan = hex(8);
    let traceparent = `00-${traceId}-${callerSpan}-01`;
    const client: ParkwayClient = createParkwayClient(server.address, {
      metadata: () => ({ traceparent }),
    });
    cleanup.push(() => Promise.resolve(client.close()));

    const created = await client.createSession({ agentId: "test" });
    const session = await client.attach(created.id);
    const parked = await collect(session.message("make the file"));
    const ask = parked.find((e) => e.event?.$case === "requireUserConfirm");
    expect(ask, "the Bash call asks").toBeDefined();
    const call =
      ask?.event?.$case === "requireUserConfirm" ? ask.event.value.toolCalls[0] : undefined;
    const callId = call!.id;
    // The answer comes from another span of the caller's trace.
    const answerSpan = hex(8);
    traceparent = `00-${traceId}-${answerSpan}-01`;
    await session.confirm(call!);
    const rest = await collect(session.untilSettled());
    expect(rest.some((e) => e.event?.$case === "replyEnd")).toBe(true);
    session.close(); // the Chat call's span ends with the stream

    const spans = await receiver.waitFor(
      (s) =>
        s.filter((x) => x.name === "invoke_agent test").length === 2 &&
        s.some((x) => x.name === "park") &&
        s.filter((x) => x.name.startsWith("chat ")).length === 2 &&
        s.some((x) => x.name === "execute_tool Bash") &&
        s.some((x) => x.name === "parkway.v1.AgentService/Chat"),
    );
    const traced = spans.filter((s) => s.traceId === traceId);
    // The gRPC server span of the stream, a child of the caller's span (RPC conventions).
    const chat = one(traced, (s) => s.name === "parkway.v1.AgentService/Chat", "one Chat span");
    expect(chat.kind).toBe(2);
    expect(chat.parentSpanId).toBe(callerSpan);
    expect(chat.attributes).toMatchObject({
      "rpc.system": "grpc",
      "rpc.service": "parkway.v1.AgentService",
      "rpc.method": "Chat",
    });
    // The reply: started under the call that sent the message.
    const runs = traced.filter((s) => s.name === "invoke_agent test");
    expect(runs).toHaveLength(2);
    const reply = one(runs, (s) => s.parentSpanId === chat.spanId, "the reply under the call");
    expect(reply.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "test",
      "gen_ai.conversation.id": created.id,
      "parkway.reply.state": "parked",
    });
    // Its run after the answer: a child of the reply, linked to the span that answered.
    const resumed = one(runs, (s) => s.parentSpanId === reply.spanId, "the resumed run");
    expect(resumed.attributes["parkway.reply.resumed"]).toBe(true);
    expect(resumed.attributes["parkway.reply.finished_reason"]).toBe("completed");
    expect(resumed.links.map((l) => l.spanId)).toContain(chat.spanId);
    // The model calls: one per run, with GenAI attributes and the scripted usage.
    const calls = traced.filter((s) => s.name.startsWith("chat "));
    const first = one(calls, (s) => s.parentSpanId === reply.spanId, "the first model call");
    const second = one(calls, (s) => s.parentSpanId === resumed.spanId, "the second model call");
    expect(first.kind).toBe(3);
    expect(first.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "scripted",
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 12,
      "gen_ai.response.finish_reasons": ["tool_calls"],
    });
    expect(second.attributes).toMatchObject({
      "gen_ai.usage.input_tokens": 150,
      "gen_ai.response.finish_reasons": ["stop"],
    });
    // The tool call ran after the answer, under the resumed run, with its decision and state.
    const tool = one(traced, (s) => s.name === "execute_tool Bash", "one tool call");
    expect(tool.parentSpanId).toBe(resumed.spanId);
    expect(tool.attributes).toMatchObject({
      "gen_ai.tool.name": "Bash",
      "gen_ai.tool.call.id": callId,
      "parkway.tool.state": "success",
      // The engine asked a person, who allowed it.
      "parkway.permission.behavior": "ask",
    });
    // The park: under the reply, from REQUIRE_USER_CONFIRM to the answer.
    const park = one(traced, (s) => s.name === "park", "one park");
    expect(park.parentSpanId).toBe(reply.spanId);
    expect(park.attributes["parkway.park.kinds"]).toEqual(["confirm"]);
    expect(park.startMs).toBeGreaterThanOrEqual(reply.startMs);
    expect(park.endMs).toBeLessThanOrEqual(resumed.startMs + 1);
    // The spans of the reply all belong to the caller's trace.
    for (const s of [reply, resumed, first, second, tool, park]) expect(s.traceId).toBe(traceId);
    // The model's HTTP requests carried the model calls' own span context onward.
    expect(model.traceparents).toEqual([
      `00-${traceId}-${first.spanId}-01`,
      `00-${traceId}-${second.spanId}-01`,
    ]);
  });

  it("continues a parked reply's trace after a restart", async () => {
    const receiver = await startOtlpReceiver();
    cleanup.push(() => receiver.close());
    const { root, model, config } = await prepareAgent("parkway-trace-", () => ({}));
    cleanup.push(() => model.close());
    await model.reset({
      turns: [
        { toolCalls: [{ name: "Bash", input: { command: "touch later.txt" } }] },
        { text: "ok" },
      ],
    });
    const env = {
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: "50",
    };
    const dataDir = path.join(root, "data");
    const launch = (address?: string) =>
      spawnServer({
        dataDir,
        direct: true,
        args: ["--config", config, ...(address ? ["--listen", address] : [])],
        env,
      });
    let server = await launch();
    cleanup.push(async () => void (await server.stop()));
    const traceId = hex(16);
    const client = createParkwayClient(server.address, {
      metadata: () => ({ traceparent: `00-${traceId}-${hex(8)}-01` }),
    });
    cleanup.push(() => Promise.resolve(client.close()));
    const created = await client.createSession({ agentId: "test" });
    const parked = await client.reply({
      sessionId: created.id,
      input: { $case: "userMessage", value: { text: "make it", content: [] } },
    });
    const call = parked.pendingToolCalls[0]!;
    await receiver.waitFor((s) => s.some((x) => x.name === "invoke_agent test"));
    // A graceful stop flushes the spans; the reply stays parked in the store.
    await server.stop();
    server = await launch(server.address);
    await client.reply({
      sessionId: created.id,
      input: {
        $case: "userConfirmResult",
        value: { replyId: "", confirmResults: [confirmation(call)] },
      },
    });
    const spans = await receiver.waitFor(
      (s) =>
        s.filter((x) => x.name === "invoke_agent test").length === 2 &&
        s.some((x) => x.name === "park"),
    );
    const runs = spans.filter((s) => s.name === "invoke_agent test");
    const reply = runs.find((s) => s.attributes["parkway.reply.resumed"] === false)!;
    const resumed = runs.find((s) => s.attributes["parkway.reply.resumed"] === true)!;
    expect(resumed.parentSpanId).toBe(reply.spanId);
    expect(resumed.traceId).toBe(traceId);
    const park = spans.find((s) => s.name === "park")!;
    expect(park.parentSpanId).toBe(reply.spanId);
    expect(park.startMs).toBeLessThan(resumed.startMs);
  });

  it("stops cleanly on SIGTERM when the collector cannot take the last spans", async () => {
    // A port that was free a moment ago: nothing listens there, so the final export fails.
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const { server } = await serverWith({
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closed}`,
      // Spans wait for the shutdown's flush.
      OTEL_BSP_SCHEDULE_DELAY: "60000",
    });
    const client = createParkwayClient(server.address);
    cleanup.push(() => Promise.resolve(client.close()));
    await client.createSession({ agentId: "test" });
    expect(await server.stop()).toBe(0);
    const lines = server.output.map((line) => {
      try {
        return JSON.parse(line) as { msg?: string; err?: { message?: string } };
      } catch {
        return { msg: line };
      }
    });
    expect(lines.map((l) => l.msg)).toContain("stopped");
    const warned = lines.find((l) => l.msg?.startsWith("could not export the last spans"));
    expect(warned?.err?.message).toContain("ECONNREFUSED");
  });

  it("says at start when OTEL_* names an exporter or a protocol the server does not have", async () => {
    const { server } = await serverWith({
      OTEL_TRACES_EXPORTER: "jaeger,otlp",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuff",
    });
    const warnings = server.output
      .map((line) => {
        try {
          return JSON.parse(line) as { level?: number; msg?: string };
        } catch {
          return {};
        }
      })
      .filter((l) => l.level === 40)
      .map((l) => l.msg);
    expect(warnings).toContain(
      'OTEL_TRACES_EXPORTER: "jaeger" is not an exporter this server has (otlp, zipkin, console, none); no spans go there',
    );
    expect(warnings).toContain(
      'OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuff" is not an OTLP protocol (grpc, http/protobuf, http/json); the exporter uses http/protobuf',
    );
  });
});
