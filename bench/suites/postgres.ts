/**
 * Parkway on PostgreSQL (single node). One temporary cluster for the run (bench/lib/postgres-cluster.ts),
 * the compiled server (dist/) on it, as `--database-url` opens it; measured in the same run:
 * - Park acknowledged: model's last byte → REQUIRE_USER_CONFIRM, as the LevelDB park row measures
 *   it, against the echo round trip + a bare synced INSERT commit (1 KB row, its own client on the
 *   same database), in alternating rounds.
 * - Resume (confirm → REPLY_END) of replies parked through the server, against the same on LevelDB
 *   (the compiled server too), the two servers alternating; bare INSERT commits are sampled between.
 * - Streamed text deltas, 1 session (the Go generator, as the throughput row runs it), against the
 *   same on LevelDB, alternating.
 * - A reply's first text delta (user message → first TEXT_BLOCK_DELTA at the client), against the
 *   same on LevelDB, in alternating rounds of pings.
 */
import path from "node:path";
import type { BenchConfig } from "../lib/config.js";
import { encodedSize } from "../lib/echo-service.js";
import { attachRaw } from "../lib/event-stream.js";
import { pingFirstDelta, type TimedPing } from "../lib/first-delta.js";
import { buildLoad, runLoad, withCpu } from "../lib/go-load.js";
import { measureParks, PARK_STAGES } from "../lib/park.js";
import { SyncedInserts } from "../lib/pg-baselines.js";
import { type BenchPostgres, startBenchPostgres, walSyncs } from "../lib/postgres-cluster.js";
import { parkSession, resumeOne } from "../lib/resume.js";
import { nodeRows } from "./postgres-nodes.js";
import { latency, type Row, row, single } from "../lib/rows.js";
import { ensureBuilt, type Stack, startStack } from "../lib/stack.js";
import { median, summarize } from "../lib/stats.js";
import { describeStoreTimes, type OpTimes } from "../lib/store-times.js";

const us = (v: number) => `${Math.round(v)} µs`;
const p50p99 = (samples: number[]) => {
  const s = summarize(samples);
  return `p50 ${us(s.p50)} / p99 ${us(s.p99)}`;
};

/** Pings per round on one server (a fresh session each round). */
const PING_ROUND = 50;

/** Park acknowledged on PostgreSQL against echo + a bare synced INSERT commit. */
async function parkRow(config: BenchConfig, pg: BenchPostgres): Promise<Row> {
  const url = await pg.createDatabase("parkway_park");
  const stack = await startStack(config, {
    databaseUrl: url,
    compiled: true,
    proxy: true,
    profile: "pg-park",
  });
  const inserts = new SyncedInserts(url);
  let rounds;
  try {
    await inserts.open();
    rounds = await measureParks(config, stack, {
      commit: (n) => inserts.commits(n),
      transaction: (n) => inserts.transactions(n),
      select: (n) => inserts.roundTrips(n),
    });
  } finally {
    await inserts.close();
    await stack.close();
  }
  const park = summarize(rounds.parked);
  const e = summarize(rounds.echoed);
  const c = summarize(rounds.baselines.commit!);
  const limit = e.p50 + 1.2 * c.p50;
  const split = PARK_STAGES.map((name, k) => `${name} ${us(summarize(rounds.stages[k]!).p50)}`);
  return row(
    {
      id: "pg.park",
      name: "Park (synced) acknowledged on PostgreSQL vs echo + bare synced INSERT commit",
      unit: "us",
      parkway: latency("model's last byte → REQUIRE_USER_CONFIRM at the client", park),
      baseline: single("echo p50 + synced INSERT commit p50", e.p50 + c.p50, c.n),
      note:
        `Target: p50 ≤ echo p50 + 1.2 × INSERT commit p50 = ${us(limit)}. Compiled server, one node, ` +
        `pool of 4. Where the time goes (p50 of each stage; the store's operations timed in the server ` +
        `on the same clock, "synced write" being its transaction committed with synchronous_commit on): ${split.join("; ")}. ` +
        `Echo round trip ${p50p99(rounds.echoed)}; bare INSERT of a 1 KB row in autocommit (INSERT and synced COMMIT in one round trip, ` +
        `its own client on the same database) ${p50p99(rounds.baselines.commit!)}; the same as BEGIN; INSERT; COMMIT ` +
        `(three round trips) ${p50p99(rounds.baselines.transaction!)}; SELECT 1 round trip ${p50p99(rounds.baselines.select!)}. ` +
        `REPLY_PARKED follows at ${p50p99(rounds.parkedEnd)}. REQUIRE_USER_CONFIRM ${encodedSize(rounds.template)} B. ` +
        describeStoreTimes(
          rounds.store,
          config.iterations + config.warmup,
          "park (message, park, interrupt)",
        ),
    },
    { text: `p50 ≤ echo + 1.2× INSERT commit (${us(limit)})`, met: park.p50 <= limit },
  );
}

interface Server {
  name: string;
  stack: Stack;
  parked: string[];
  resumes: number[];
  attaches: number[];
  store: OpTimes;
  rates: number[];
  cores: number[];
  pings: TimedPing[];
}

/**
 * Resume, streamed deltas and a reply's first delta on PostgreSQL against LevelDB, the two servers
 * alternating.
 */
async function compareRows(config: BenchConfig, pg: BenchPostgres): Promise<Row[]> {
  const url = await pg.createDatabase("parkway_resume");
  const bin = await buildLoad(path.join(config.scratch, "bin"));
  const inserts = new SyncedInserts(url);
  const servers: Server[] = [];
  const commits: number[] = [];
  let walPerResume = Number.NaN;
  const warmup = Math.min(config.warmup, 20);
  const total = config.resumeSamples + warmup;
  const reps = config.smoke ? 1 : 3;
  const replies = config.singleSessionReplies;
  try {
    await inserts.open();
    for (const [name, databaseUrl] of [
      ["PostgreSQL", url],
      ["LevelDB", undefined],
    ] as const) {
      const stack = await startStack(config, {
        compiled: true,
        profile: `pg-compare-${name}`,
        ...(databaseUrl ? { databaseUrl } : {}),
      });
      servers.push({
        name,
        stack,
        parked: [],
        resumes: [],
        attaches: [],
        store: {},
        rates: [],
        cores: [],
        pings: [],
      });
    }
    for (let i = 0; i < total; i++) {
      for (const s of servers) s.parked.push(await parkSession(s.stack));
    }
    for (const s of servers) await s.stack.parkway.call("storeTimes");
    // Each reading waits 11 s for the backends' counts: not in a smoke run.
    const walBefore = config.smoke ? Number.NaN : await walSyncs(pg);
    for (let i = 0; i < total; i++) {
      for (let j = 0; j < servers.length; j++) {
        const s = servers[(i + j) % servers.length]!;
        const t = await resumeOne(s.stack, s.parked[i]!);
        if (i < warmup) continue;
        s.resumes.push(t.resume);
        s.attaches.push(t.attach);
      }
      const [commit] = await inserts.commits(1);
      if (i >= warmup) commits.push(commit!);
    }
    for (const s of servers) s.store = await s.stack.parkway.call<OpTimes>("storeTimes");
    // The sampled INSERTs commit once each; the LevelDB server does not use the database.
    if (!config.smoke) walPerResume = ((await walSyncs(pg)) - walBefore - total) / total;
    const args = ["-streams", "1", "-conns", "1", "-replies", String(replies), "stream-parkway"];
    for (const s of servers) {
      await runLoad(bin, [
        "-addr",
        s.stack.parkway.ready.address,
        "-replies",
        "1",
        "stream-parkway",
      ]);
    }
    // Pings in rounds on a fresh session per server and round, the servers alternating.
    const pings = config.iterations + config.warmup;
    for (let done = 0, round = 0; done < pings; done += PING_ROUND, round++) {
      for (let j = 0; j < servers.length; j++) {
        const s = servers[(round + j) % servers.length]!;
        const session = await s.stack.client.createSession({ agentId: "bench" });
        const stream = await attachRaw(s.stack.client.agentService, session.id);
        for (let i = 0; i < Math.min(PING_ROUND, pings - done); i++) {
          const ping = await pingFirstDelta(stream, session.id);
          if (done + i >= config.warmup) s.pings.push(ping);
        }
        stream.close();
      }
    }
    for (let rep = 0; rep < reps; rep++) {
      for (let j = 0; j < servers.length; j++) {
        const s = servers[(rep + j) % servers.length]!;
        const [got, cores] = await withCpu(s.stack.parkway.pid, () =>
          runLoad<{ rate: number }>(bin, ["-addr", s.stack.parkway.ready.address, ...args]),
        );
        s.rates.push(got.rate);
        s.cores.push(cores);
      }
    }
  } finally {
    await inserts.close();
    for (const s of servers) await s.stack.close();
  }
  const [onPg, onLevel] = servers as [Server, Server];
  const c = summarize(commits);
  const r = summarize(onPg.resumes);
  const stores = servers
    .map((s) => describeStoreTimes(s.store, total, `resume on ${s.name} (attach, confirm, end)`))
    .join(" ");
  const rates = (s: Server) => s.rates.map(Math.round).join(", ");
  const after = (s: Server, at: (p: TimedPing) => number) => s.pings.map((p) => at(p) - p.sent);
  const firstDelta = summarize(after(onPg, (p) => p.delta));
  const cores = (s: Server) => median(s.cores).toFixed(2);
  return [
    row({
      id: "pg.resume",
      name: "Resume (confirm → REPLY_END) on PostgreSQL vs LevelDB",
      unit: "us",
      parkway: latency("PostgreSQL", r),
      baseline: latency("LevelDB, same run", summarize(onLevel.resumes)),
      note:
        `${r.n} replies parked through each server (compiled, one node) resumed one at a time, the two servers alternating, ` +
        `after ${warmup} warm-up resumes each (noop tool, one scripted model call). Bare synced INSERT commit (1 KB, autocommit, same database), ` +
        `sampled between the resumes: ${p50p99(commits)}; resume on PostgreSQL p50 = ${(r.p50 / c.p50).toFixed(1)}× that. ` +
        `Attach → re-announced REQUIRE_USER_CONFIRM: ${p50p99(onPg.attaches)} on PostgreSQL, ${p50p99(onLevel.attaches)} on LevelDB. ` +
        `WAL flushes of the database per resume on PostgreSQL (pg_stat_wal, the sampled INSERTs' taken out): ${config.smoke ? "not counted in a smoke run" : walPerResume.toFixed(1)}. ${stores}`,
    }),
    row({
      id: "pg.stream.1",
      name: "Streamed text deltas, 1 session, on PostgreSQL vs LevelDB",
      unit: "per_s",
      parkway: single(
        `TEXT_BLOCK_DELTA/s at the Go client on PostgreSQL, median of ${reps}`,
        median(onPg.rates),
      ),
      baseline: single(`the same on LevelDB, same run, median of ${reps}`, median(onLevel.rates)),
      note:
        `Runs: PostgreSQL ${rates(onPg)}/s; LevelDB ${rates(onLevel)}/s; 1 session × ${replies} replies × ${config.streamDeltas} deltas, ` +
        `the two servers alternating (compiled, one node). The events of a streaming reply are written unsynced on LevelDB; ` +
        `on PostgreSQL every transaction commits with synchronous_commit on. CPU cores used by the server during the runs: ${cores(onPg)} on PostgreSQL ` +
        `(the database's own processes not counted), ${cores(onLevel)} on LevelDB.`,
    }),
    row({
      id: "pg.first_delta",
      name: "A reply's first text delta on PostgreSQL vs LevelDB",
      unit: "us",
      parkway: latency(
        "user message → first TEXT_BLOCK_DELTA at the client, PostgreSQL",
        firstDelta,
      ),
      baseline: latency("LevelDB, same run", summarize(after(onLevel, (p) => p.delta))),
      note:
        `"ping" (a short text reply of the scripted model, zero delay) in rounds of ${PING_ROUND} on a fresh session, the two servers ` +
        `alternating (compiled, one node), after ${config.warmup} warm-up pings. REPLY_START: ${p50p99(after(onPg, (p) => p.start))} ` +
        `on PostgreSQL (it waits for the commit of the reply's start there), ${p50p99(after(onLevel, (p) => p.start))} on LevelDB. ` +
        `The model's events go out ahead of their write on both stores once the reply's start is stored.`,
    }),
  ];
}

export async function postgresRows(config: BenchConfig): Promise<Row[]> {
  await ensureBuilt();
  const pg = await startBenchPostgres();
  try {
    const park = await parkRow(config, pg);
    return [park, ...(await compareRows(config, pg)), ...(await nodeRows(config, pg))];
  } finally {
    await pg.stop();
  }
}
