/**
 * Park (synced) acknowledged. The scripted model answers "park" with one call of bench_noop, which
 * needs a confirmation, so the reply parks: Parkway commits the parked state with a synced write,
 * then sends REQUIRE_USER_CONFIRM. Timed from the moment the model's last byte (the SSE `[DONE]`)
 * is handed to Parkway's socket (a timing proxy in this process) to REQUIRE_USER_CONFIRM at the
 * client (also in this process): one hop in, Parkway's work and its synced write, one hop out, the
 * same shape as an echo round trip plus a sync. Baselines in alternating rounds: the bare echo
 * round trip (answering with a copy of the REQUIRE_USER_CONFIRM), raw fdatasync, and a synced
 * classic-level put.
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
import { latency, type Row, row, single } from "../lib/rows.js";
import { scratchDir, startEcho, startStack } from "../lib/stack.js";
import { summarize } from "../lib/stats.js";
import { describeStoreTimes, mergeOps, type OpTimes } from "../lib/store-times.js";
import { fdatasyncSamples, SyncedPuts } from "../lib/sync-baselines.js";
import type { TimingProxy } from "../lib/timing-proxy.js";

const PER_ROUND = 50;

/** One park, on the monotonic clock (µs). */
interface Park {
  modelDone: number;
  requireAt: number;
  parkedAt: number;
  require: ServerEvent;
}

/** The stages of a park: where the server's synced write falls in it. */
const STAGES = [
  "model done → synced write starts (SSE end, tool call, permission check, earlier writes)",
  "of which unsynced writes of the turn's last events",
  "synced write",
  "write done → REQUIRE_USER_CONFIRM at the client (fan-out, gRPC out)",
] as const;

function stagesOf(p: Park, ops: OpTimes): number[] | undefined {
  const sync = ops.write_sync?.find(([s]) => s >= p.modelDone && s <= p.requireAt);
  if (!sync) return undefined;
  const earlier = (ops.write ?? []).filter(([s, e]) => s >= p.modelDone && e <= sync[0]);
  const writing = earlier.reduce((sum, [s, e]) => sum + (e - s), 0);
  return [sync[0] - p.modelDone, writing, sync[1] - sync[0], p.requireAt - sync[1]];
}

export async function parkLatency(config: BenchConfig): Promise<Row[]> {
  const stack = await startStack(config, { proxy: true, profile: "park-latency" });
  const echoServer = await startEcho();
  const echo = echoClient(echoServer.ready.address);
  const dir = await scratchDir(config, "sync");
  const puts = new SyncedPuts(dir);
  await puts.open();
  const parked: number[] = [];
  const parkedEnd: number[] = [];
  const echoed: number[] = [];
  const fsyncs: number[] = [];
  const levelPuts: number[] = [];
  let template: ServerEvent | undefined;
  const store: OpTimes = {};
  const stages: number[][] = STAGES.map(() => []);
  try {
    const total = config.iterations + config.warmup;
    for (let done = 0; done < total;) {
      const n = Math.min(PER_ROUND, total - done);
      const keep = (i: number) => done + i >= config.warmup;
      const session = await stack.client.createSession({ agentId: "bench" });
      const stream = await attachRaw(stack.client.agentService, session.id);
      await stack.parkway.call("storeTimes");
      const round: Park[] = [];
      for (let i = 0; i < n; i++) {
        const sample = await parkOnce(stream, session.id, stack.proxy!);
        template ??= sample.require;
        if (keep(i)) round.push(sample);
      }
      const ops = await stack.parkway.call<OpTimes>("storeTimes");
      mergeOps(store, ops);
      for (const p of round) {
        parked.push(p.requireAt - p.modelDone);
        parkedEnd.push(p.parkedAt - p.modelDone);
        stagesOf(p, ops)?.forEach((us, k) => stages[k]!.push(us));
      }
      stream.close();
      const echoStream = openEcho(echo, template!);
      for (let i = 0; i < n; i++) {
        const t0 = echoStream.send(
          clientEvent(session.id, { $case: "userMessage", value: { text: "park", content: [] } }),
        );
        const answer = await echoStream.next();
        if (keep(i)) echoed.push(answer.at - t0);
      }
      echoStream.close();
      const syncs = fdatasyncSamples(dir, n);
      const levels = await puts.samples(n);
      for (let i = 0; i < n; i++) {
        if (!keep(i)) continue;
        fsyncs.push(syncs[i]!);
        levelPuts.push(levels[i]!);
      }
      done += n;
    }
  } finally {
    await puts.close();
    echo.close();
    await echoServer.close();
    await stack.close();
  }
  const park = summarize(parked);
  const e = summarize(echoed);
  const f = summarize(fsyncs);
  const l = summarize(levelPuts);
  const limit = e.p50 + 1.2 * f.p50;
  const us = (v: number) => `${Math.round(v)} µs`;
  const parkFigure = latency("model's last byte → REQUIRE_USER_CONFIRM at the client", park);
  const end = summarize(parkedEnd);
  const split = STAGES.map((name, k) => `${name} ${us(summarize(stages[k]!).p50)}`);
  const common = `Where the time goes (p50 of each stage, server store operations timed on the same clock): ${split.join("; ")}. Echo round trip p50 ${us(e.p50)} / p99 ${us(e.p99)}; raw fdatasync (1 KB) p50 ${us(f.p50)} / p99 ${us(f.p99)}; classic-level synced put (1 KB) p50 ${us(l.p50)} / p99 ${us(l.p99)}. REPLY_PARKED follows at p50 ${us(end.p50)} / p99 ${us(end.p99)}. REQUIRE_USER_CONFIRM ${encodedSize(template!)} B. ${describeStoreTimes(store, config.iterations + config.warmup, "park (message, park, interrupt)")}`;
  return [
    row(
      {
        id: "park.fdatasync",
        name: "Park (synced) acknowledged vs echo + raw fdatasync",
        unit: "us",
        parkway: parkFigure,
        baseline: single("echo p50 + fdatasync p50", e.p50 + f.p50, f.n),
        note: `Target: p50 ≤ echo p50 + 1.2 × fdatasync p50 = ${us(limit)}. ${common}`,
      },
      { text: `p50 ≤ echo + 1.2× fdatasync (${us(limit)})`, met: park.p50 <= limit },
    ),
    row({
      id: "park.level_put",
      name: "Park (synced) acknowledged vs echo + synced classic-level put",
      unit: "us",
      parkway: parkFigure,
      baseline: single("echo p50 + classic-level synced put p50", e.p50 + l.p50, l.n),
      note: common,
    }),
  ];
}

/** One parked reply: times from the model's last byte; then interrupts it and waits for its end. */
async function parkOnce(stream: EventStream, sessionId: string, proxy: TimingProxy): Promise<Park> {
  const before = proxy.lastByteAt.length;
  stream.send(
    clientEvent(sessionId, { $case: "userMessage", value: { text: "park", content: [] } }),
  );
  const events = await stream.until((e) => caseOf(e) === "replyParked");
  const require = events.find((a) => caseOf(a.event) === "requireUserConfirm");
  const parked = events[events.length - 1]!;
  const modelDone = proxy.lastByteAt[proxy.lastByteAt.length - 1];
  if (!require || modelDone === undefined || proxy.lastByteAt.length !== before + 1) {
    throw new Error("park: expected one model response and one REQUIRE_USER_CONFIRM");
  }
  stream.send(clientEvent(sessionId, { $case: "userInterrupt", value: { replyId: "" } }));
  await stream.until((e) => caseOf(e) === "replyEnd");
  return { modelDone, requireAt: require.at, parkedAt: parked.at, require: require.event };
}
