/**
 * Park (synced) acknowledged. The scripted model answers "park" with one call of bench_noop, which
 * needs a confirmation, so the reply parks: Parkway commits the parked state with a synced write,
 * then sends REQUIRE_USER_CONFIRM. Timed from the moment the model's last byte (the SSE `[DONE]`)
 * is handed to Parkway's socket (a timing proxy in this process) to REQUIRE_USER_CONFIRM at the
 * client (also in this process): one hop in, Parkway's work and its synced write, one hop out, the
 * same shape as an echo round trip plus a sync. Baselines in alternating rounds: the bare echo
 * round trip (answering with a copy of the REQUIRE_USER_CONFIRM), raw fdatasync, a synced
 * classic-level put, and the same turns through a bare park server (bench/servers/bare-park.ts).
 */
import path from "node:path";
import { benchScript, startChild } from "../lib/child.js";
import type { BenchConfig } from "../lib/config.js";
import { encodedSize } from "../lib/echo-service.js";
import { measureParks, PARK_STAGES, type ParkRounds } from "../lib/park.js";
import { latency, type Row, row, single } from "../lib/rows.js";
import { scratchDir, startStack } from "../lib/stack.js";
import { summarize } from "../lib/stats.js";
import { describeStoreTimes } from "../lib/store-times.js";
import { fdatasyncSamples, SyncedPuts } from "../lib/sync-baselines.js";

export async function parkLatency(config: BenchConfig): Promise<Row[]> {
  const stack = await startStack(config, { proxy: true, profile: "park-latency" });
  const dir = await scratchDir(config, "sync");
  const puts = new SyncedPuts(dir);
  const bare = await startChild<{ address: string }>(
    benchScript("bare-park.ts"),
    { dir: path.join(dir, "bare-park"), modelUrl: stack.proxy!.url },
    { server: true },
  ).catch(async (err: unknown) => {
    await stack.close();
    throw err;
  });
  let rounds: ParkRounds;
  try {
    await puts.open();
    rounds = await measureParks(
      config,
      stack,
      { fdatasync: (n) => fdatasyncSamples(dir, n), levelPut: (n) => puts.samples(n) },
      bare.ready.address,
    );
  } finally {
    await puts.close();
    await bare.close();
    await stack.close();
  }
  const { parked, parkedEnd, echoed, stages, store, template } = rounds;
  const bareParks = summarize(rounds.bare);
  const fsyncs = rounds.baselines.fdatasync!;
  const levelPuts = rounds.baselines.levelPut!;
  const park = summarize(parked);
  const e = summarize(echoed);
  const f = summarize(fsyncs);
  const l = summarize(levelPuts);
  const limit = e.p50 + 1.2 * f.p50;
  const us = (v: number) => `${Math.round(v)} µs`;
  const parkFigure = latency("model's last byte → REQUIRE_USER_CONFIRM at the client", park);
  const end = summarize(parkedEnd);
  const split = PARK_STAGES.map((name, k) => `${name} ${us(summarize(stages[k]!).p50)}`);
  const common = `Where the time goes (p50 of each stage, server store operations timed on the same clock): ${split.join("; ")}. Echo round trip p50 ${us(e.p50)} / p99 ${us(e.p99)}; raw fdatasync (1 KB) p50 ${us(f.p50)} / p99 ${us(f.p99)}; classic-level synced put (1 KB) p50 ${us(l.p50)} / p99 ${us(l.p99)}. REPLY_PARKED follows at p50 ${us(end.p50)} / p99 ${us(end.p99)}. REQUIRE_USER_CONFIRM ${encodedSize(template)} B. ${describeStoreTimes(store, config.iterations + config.warmup, "park (message, park, interrupt)")}`;
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
      id: "park.bare",
      name: "Park (synced) acknowledged: Parkway vs a bare park server (the same hops and writes)",
      unit: "us",
      parkway: parkFigure,
      baseline: latency("the same turns through a bare park server", bareParks),
      note:
        `The bare park (bench/servers/bare-park.ts, a process of its own on the server side) ` +
        `answers the same client messages on a grpc-js bidi stream: a user message makes it write ` +
        `an unsynced classic-level batch (the reply's start) while it calls the same model for ` +
        `the same "park" turn through the same timing proxy, read the answer to its end, write a ` +
        `synced batch as large as Parkway's park (9 records, 6.6 KB), and send copies of ` +
        `Parkway's REQUIRE_USER_CONFIRM and REPLY_PARKED; the interrupt, an unsynced batch and ` +
        `REPLY_END. Its rounds alternate with Parkway's at the same pace, so the synced write ` +
        `costs it what it costs on this machine between parks (a write and fdatasync back to back ` +
        `cost less: the first row's baseline). What Parkway adds to it is its own work: the ` +
        `session, the permission check, the event log, the records and their encoding. p50 ` +
        `${us(bareParks.p50)} / p99 ${us(bareParks.p99)}, n=${bareParks.n}.`,
    }),
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
