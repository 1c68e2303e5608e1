/**
 * Input → first resulting event. A user message ("ping") goes in on an attached Chat stream; the
 * server answers with REPLY_START (the reply's first event, written to the event log unsynced, no
 * model involved yet) and an `input_ack` for the request id. Both are timed from the write at the
 * client. The baseline is the bare grpc-js bidi echo answering the same ClientEvent with a copy of
 * a real REPLY_START (same size, same ts-proto codec), measured through the same client code in
 * alternating rounds. The server's store operations are timed on the same monotonic clock, which
 * splits each round trip into stages.
 */
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import type { BenchConfig } from "../lib/config.js";
import { encodedSize } from "../lib/echo-service.js";
import {
  attachRaw,
  caseOf,
  clientEvent,
  echoClient,
  type EventStream,
  openEcho,
} from "../lib/event-stream.js";
import { latency, type Row, row } from "../lib/rows.js";
import { startEcho, startStack } from "../lib/stack.js";
import { type Summary, summarize } from "../lib/stats.js";
import { describeStoreTimes, mergeOps, type OpTimes } from "../lib/store-times.js";

/** Round trips per round; each Parkway round uses a fresh session (a short history). */
const PER_ROUND = 50;

export interface InputLatencyResult {
  rows: Row[];
  /** The echo's round trip, which the park row builds on. */
  echo: Summary;
}

/** One user message, on the monotonic clock (µs). */
export interface Ping {
  sent: number;
  start: number;
  ack: number;
  replyStart: ServerEvent;
  ackSize: number;
}

/**
 * The stages of the round trip, around the write that stores the reply's start (the first write
 * after the send: each reply ends before the next message). REPLY_START goes out ahead of it.
 */
const STAGES = [
  "send → the start's write issued (gRPC in, apply, REPLY_START to the stream, the batch built)",
  "the start's write (event log, unsynced)",
  "write done → input_ack at the client (gRPC out)",
] as const;

/** The stages of `p` (see `STAGES`), and whether REPLY_START reached the client before the write. */
function stagesOf(p: Ping, ops: OpTimes): { stages: number[]; ahead: boolean } | undefined {
  const write = ops.write?.find(([s]) => s >= p.sent && s <= p.ack);
  if (!write) return undefined;
  return {
    stages: [write[0] - p.sent, write[1] - write[0], p.ack - write[1]],
    ahead: p.start <= write[1],
  };
}

export async function inputLatency(config: BenchConfig): Promise<InputLatencyResult> {
  const stack = await startStack(config, { profile: "input-latency" });
  const echoServer = await startEcho();
  const echo = echoClient(echoServer.ready.address);
  const pings: Ping[] = [];
  const echoed: number[] = [];
  const stages: number[][] = STAGES.map(() => []);
  let ahead = 0;
  const store: OpTimes = {};
  let template: ServerEvent | undefined;
  try {
    const total = config.iterations + config.warmup;
    for (let done = 0; done < total; done += PER_ROUND) {
      const n = Math.min(PER_ROUND, total - done);
      const keep = (i: number) => done + i >= config.warmup;
      const session = await stack.client.createSession({ agentId: "bench" });
      const stream = await attachRaw(stack.client.agentService, session.id);
      await stack.parkway.call("storeTimes"); // only the round trips' own operations
      const round: Ping[] = [];
      for (let i = 0; i < n; i++) {
        const ping = await pingParkway(stream, session.id);
        template ??= ping.replyStart;
        if (keep(i)) round.push(ping);
      }
      stream.close();
      const ops = mergeOps(store, await stack.parkway.call<OpTimes>("storeTimes"));
      for (const ping of round) {
        const split = stagesOf(ping, ops);
        split?.stages.forEach((us, k) => stages[k]!.push(us));
        if (split?.ahead) ahead += 1;
      }
      pings.push(...round);
      const echoStream = openEcho(echo, template!);
      for (let i = 0; i < n; i++) {
        const t0 = echoStream.send(
          clientEvent(session.id, { $case: "userMessage", value: { text: "ping", content: [] } }),
        );
        const answer = await echoStream.next();
        if (keep(i)) echoed.push(answer.at - t0);
      }
      echoStream.close();
    }
  } finally {
    echo.close();
    await echoServer.close();
    await stack.close();
  }
  const echoSummary = summarize(echoed);
  const echoFigure = latency("bare grpc-js bidi echo, same message size", echoSummary);
  const startFirst = pings.filter((p) => p.start <= p.ack).length;
  const sizes = `REPLY_START ${encodedSize(template!)} B, input_ack ${pings[0]?.ackSize ?? 0} B, echo answer ${encodedSize(template!)} B`;
  const split = STAGES.map((name, k) => `${name} ${Math.round(summarize(stages[k]!).p50)} µs`);
  return {
    rows: [
      row(
        {
          id: "input.first_event",
          name: "Input → first resulting event (REPLY_START)",
          unit: "us",
          parkway: latency(
            "user message → REPLY_START at the client",
            summarize(pings.map((p) => p.start - p.sent)),
          ),
          baseline: echoFigure,
          note:
            `REPLY_START arrived before the input_ack in ${startFirst} of ${pings.length} round trips, so it is the first resulting event and the row the target uses. ` +
            `Where the time goes (p50 of each stage, server store operations timed on the same clock): ${split.join("; ")}; ` +
            `REPLY_START reached the client before that write was done in ${ahead} of ${stages[0]!.length}. ` +
            `${sizes}. Scripted model, zero delay; each reply finishes before the next message. ` +
            describeStoreTimes(store, pings.length, "message (the whole reply)"),
        },
        { maxRatio: 1.3, text: "p50 ≤ 1.3× echo" },
      ),
      row({
        id: "input.ack",
        name: "Input → input_ack",
        unit: "us",
        parkway: latency(
          "user message → input_ack at the client",
          summarize(pings.map((p) => p.ack - p.sent)),
        ),
        baseline: echoFigure,
        note: `The acknowledgement is sent once the input is applied (REPLY_START and the reply's state written). ${sizes}.`,
      }),
    ],
    echo: echoSummary,
  };
}

/** One user message: when REPLY_START and the ack arrived; waits for the reply's end. */
export async function pingParkway(stream: EventStream, sessionId: string): Promise<Ping> {
  const msg = clientEvent(sessionId, {
    $case: "userMessage",
    value: { text: "ping", content: [] },
  });
  const sent = stream.send(msg);
  let start: { at: number; event: ServerEvent } | undefined;
  let ack: { at: number; event: ServerEvent } | undefined;
  let ended = false;
  while (!start || !ack || !ended) {
    const a = await stream.next();
    const kind = caseOf(a.event);
    if (kind === "replyStart") start ??= a;
    else if (kind === "inputAck" && a.event.event?.$case === "inputAck") {
      const value = a.event.event.value;
      if (value.requestId !== msg.requestId) continue;
      if (value.status && value.status.code !== 0) throw new Error(value.status.message);
      ack = a;
    } else if (kind === "replyEnd") ended = true;
  }
  return {
    sent,
    start: start.at,
    ack: ack.at,
    replyStart: start.event,
    ackSize: encodedSize(ack.event),
  };
}
