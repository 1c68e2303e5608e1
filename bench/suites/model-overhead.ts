/**
 * Model-call overhead. A user message ("first") is answered by the scripted model (zero delay)
 * with a short text streamed in 8-character deltas; timed from the write at the client to the
 * first TEXT_BLOCK_DELTA at the client. The baseline is the scripted model's own first byte: the
 * exact request body Parkway sent, replayed right after by a bare node:http client, timed from the
 * request to the first response byte. The difference is what Parkway adds around a model call:
 * REPLY_START, the history read, the openai adapter, the SSE parse, the event log write and the
 * gRPC hop.
 *
 * The three parties each run in a process of their own, placed as in a deployment: the scripted
 * model (bench/servers/scripted-model.ts) on the load side's cores with the gRPC client (this
 * process), Parkway and the baseline's bare HTTP client (bench/servers/model-probe.ts) on the
 * server side's. So the model shares an event loop with neither the client that times Parkway nor
 * the client that times the model, and both of the model's callers reach it across processes.
 * A bare relay (bench/servers/model-relay.ts, server side too) takes the same turn through the
 * same hops and nothing else, by turns with Parkway: the second row.
 */
import type { BenchConfig } from "../lib/config.js";
import { RELAY_END_KEY } from "../lib/echo-service.js";
import {
  attachRaw,
  caseOf,
  clientEvent,
  echoClient,
  type EventStream,
  openEcho,
} from "../lib/event-stream.js";
import { latency, type Row, row } from "../lib/rows.js";
import { benchScript, startChild } from "../lib/child.js";
import type { ModelTiming } from "../lib/model-probe.js";
import { ensureBuilt, startStack } from "../lib/stack.js";
import { summarize } from "../lib/stats.js";
import { describeCores } from "../lib/cores.js";
import { describeStoreTimes, mergeOps, type OpTimes } from "../lib/store-times.js";

const PER_ROUND = 50;
/** The events before the first delta, in order. */
const STAGES = ["replyStart", "inputAck", "modelCallStart", "textBlockStart", "textBlockDelta"];

export async function modelOverhead(config: BenchConfig): Promise<Row[]> {
  await ensureBuilt(); // the scripted model's child runs it compiled
  const model = await startChild<{ url: string }>(benchScript("scripted-model.ts"), {
    streamDeltas: config.streamDeltas,
  });
  const probe = await startChild(benchScript("model-probe.ts"), {}, { server: true });
  const relay = await startChild<{ address: string }>(
    benchScript("model-relay.ts"),
    {},
    { server: true },
  ).catch(async (err: unknown) => {
    await Promise.all([probe.close(), model.close()]);
    throw err;
  });
  const relayClient = echoClient(relay.ready.address);
  const stack = await startStack(config, {
    profile: "model-overhead",
    modelUrl: model.ready.url,
  }).catch(async (err: unknown) => {
    relayClient.close();
    await Promise.all([probe.close(), relay.close(), model.close()]);
    throw err;
  });
  const firstDelta: number[] = [];
  const relayed: number[] = [];
  const firstByte: number[] = [];
  const firstText: number[] = [];
  const stages: Record<string, number[]> = {};
  const store: OpTimes = {};
  try {
    const total = config.iterations + config.warmup;
    for (let done = 0; done < total;) {
      const n = Math.min(PER_ROUND, total - done);
      const session = await stack.client.createSession({ agentId: "bench" });
      const stream = await attachRaw(stack.client.agentService, session.id);
      await stack.parkway.call("storeTimes");
      let relayStream: EventStream | undefined;
      for (let i = 0; i < n; i++) {
        const t0 = stream.send(
          clientEvent(session.id, { $case: "userMessage", value: { text: "first", content: [] } }),
        );
        const events = await stream.until((e) => caseOf(e) === "replyEnd");
        const delta = events.find((a) => caseOf(a.event) === "textBlockDelta");
        if (!delta) throw new Error("no TEXT_BLOCK_DELTA in the reply");
        const sent = await model.call("lastRequest");
        const own = await probe.call<ModelTiming>("time", { url: model.ready.url, body: sent });
        // The same request through the bare relay, its events copies of Parkway's.
        await relay.call("body", { url: model.ready.url, body: sent });
        relayStream ??= openEcho(relayClient, delta.event, {
          [RELAY_END_KEY]: events[events.length - 1]!.event,
        });
        const r0 = relayStream.send(
          clientEvent(session.id, { $case: "userMessage", value: { text: "first", content: [] } }),
        );
        const answer = await relayStream.until((e) => caseOf(e) === "replyEnd");
        const relayDelta = answer.find((a) => caseOf(a.event) === "textBlockDelta");
        if (!relayDelta) throw new Error("no TEXT_BLOCK_DELTA from the relay");
        if (done + i < config.warmup) continue;
        relayed.push(relayDelta.at - r0);
        const seen = new Set<string>();
        for (const a of events) {
          const kind = caseOf(a.event);
          if (!seen.has(kind)) (stages[kind] ??= []).push(a.at - t0);
          seen.add(kind);
        }
        firstDelta.push(delta.at - t0);
        firstByte.push(own.firstByte);
        firstText.push(own.firstText);
      }
      mergeOps(store, await stack.parkway.call<OpTimes>("storeTimes"));
      stream.close();
      relayStream?.close();
      done += n;
    }
  } finally {
    relayClient.close();
    await stack.close();
    await Promise.all([probe.close(), relay.close(), model.close()]);
  }
  const p = summarize(firstDelta);
  const b = summarize(firstByte);
  const t = summarize(firstText);
  const r = summarize(relayed);
  return [
    row(
      {
        id: "model.overhead",
        name: "Model-call overhead: first text delta vs the model's own first byte",
        unit: "us",
        parkway: latency("user message → first TEXT_BLOCK_DELTA at the client", p),
        baseline: latency(
          "scripted model's first byte, same request, bare HTTP client in Parkway's place",
          b,
        ),
        note:
          `Parkway adds p50 ${Math.round(p.p50 - b.p50)} µs around the model call; a bare relay ` +
          `(the next row) adds ${Math.round(r.p50 - b.p50)} µs. The model's first ` +
          `text chunk reaches the bare client at p50 ${Math.round(t.p50)} µs after its request ` +
          `(${Math.round(t.p50 - b.p50)} µs after the first byte's p50). Arrivals after the send ` +
          `(p50): ${STAGES.map((k) => `${k} ${Math.round(summarize(stages[k] ?? []).p50)} µs`).join(", ")}. ` +
          `${describeStoreTimes(store, config.iterations + config.warmup, "reply")} Processes: the ` +
          `scripted model in its own, with the gRPC client's (the benchmark's) on the load side; ` +
          `Parkway and the bare HTTP client each in its own on the server side (${describeCores()}).`,
      },
      {
        text: `p50 ≤ the model's first byte + 1 ms (${Math.round(b.p50 + 1000)} µs)`,
        met: p.p50 <= b.p50 + 1000,
      },
    ),
    row({
      id: "model.relay",
      name: "First text delta: Parkway vs a bare relay (the same hops, nothing else)",
      unit: "us",
      parkway: latency("user message → first TEXT_BLOCK_DELTA at the client", p),
      baseline: latency("the same through a bare grpc-js relay to the same model", r),
      note:
        `The relay (bench/servers/model-relay.ts, a process of its own on the server side) takes a ` +
        `message over a grpc-js bidi stream, POSTs the body Parkway sent for the same turn to the ` +
        `scripted model over a keep-alive node:http agent, and sends one TEXT_BLOCK_DELTA (a copy ` +
        `of Parkway's) with the first text delta it reads, then REPLY_END: the hops any server ` +
        `between a client and a model takes, with no session, history, store or event log. It ` +
        `adds p50 ${Math.round(r.p50 - b.p50)} µs to the model's first byte on this machine; ` +
        `Parkway adds ${Math.round(p.p50 - r.p50)} µs to the relay. Taken by turns with Parkway's ` +
        `pings and the bare client's replays, on the same model.`,
    }),
  ];
}
