/**
 * Parked replies cost no memory, and resuming one does not slow down as they pile up. For each data
 * set (1k, 100k, 1M parked replies by default, written straight into the store, see
 * bench/lib/parked-data.ts) Parkway runs on the data directory in its own child process, all at
 * once; sessions drawn at random over each key space are resumed one at a time, one data set after
 * the other in turn: attach (the pending call is re-announced), then confirm → REPLY_END is timed
 * (the noop tool runs, one model call, the reply ends). This is repeated in `ROUNDS` rounds, each
 * with fresh processes. Server memory is read once the process is settled (see `settledMemory`),
 * right after the start and after the resumes; each data set's figure is its median process's. Each
 * data set is compared with the smallest one of the same run; a bare classic-level process reading
 * the same records gives the store's own memory for context.
 */
import { readFile } from "node:fs/promises";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { benchScript as childScript, type Memory, startChild } from "../lib/child.js";
import type { BenchConfig } from "../lib/config.js";
import {
  noteResumed,
  type ParkedData,
  parkedData,
  parkedId,
  sampleIndices,
} from "../lib/parked-data.js";
import { resumeOne } from "../lib/resume.js";
import { latency, type Row, row, single } from "../lib/rows.js";
import { type Stack, startStack } from "../lib/stack.js";
import { median, type Summary, summarize } from "../lib/stats.js";
import { describeStoreTimes, mergeOps, type OpTimes } from "../lib/store-times.js";

/** Processes per data set, one round after the other; memory is the median process's. */
const ROUNDS = 3;

/**
 * How long a server is left idle between two full GCs before its memory is read. V8 sizes its young
 * generation (up to 2 × 16 MB of semi-spaces) by the survival of recent scavenges, and a full GC
 * gives the grown semi-spaces back only when the allocation rate over the last 5 s was low (the
 * children run without V8's memory reducer, which would do the same at a moment of its choosing;
 * `gc()` on Node 20 takes no memory-reducing flavour). Without the wait, whether a process still
 * held 1 or 30 MB of young generation decided its RSS.
 */
const IDLE_MS = 6000;

interface SizeResult {
  size: number;
  resume: Summary;
  attach: Summary;
  /** After the resumes: the median process's (by RSS). */
  memory: Reading;
  /** Right after the start, before any resume: the median process's (by RSS). */
  atStart: Reading;
  /** Every process's RSS after the resumes and right after the start, round by round. */
  rss: number[];
  rssAtStart: number[];
  /** Processes (rounds) the figures come from. */
  processes: number;
  /** How long each process was left idle before a memory reading (see `IDLE_MS`). */
  idleMs: number;
  bare: Reading;
  buildSeconds: number;
  cached: boolean;
  /** µs of the first CreateSession after the start (it may count the tenant's sessions), median. */
  firstCreate: number;
  store: OpTimes;
}

/** What one round measured on one data set. */
interface RoundResult {
  resumes: number[];
  attaches: number[];
  memory: Reading;
  atStart: Reading;
  firstCreate: number;
  store: OpTimes;
  /** The sessions resumed. */
  ids: string[];
}

const MB = 2 ** 20;
const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
const list = (values: readonly number[]) =>
  values.map((v) => (v / MB).toFixed(1)).join(" / ") + " MB";

/** One data set with Parkway running on it, and what was measured there. */
interface Running {
  size: number;
  data: ParkedData;
  stack: Stack;
  candidates: number[];
  ids: string[];
  resumes: number[];
  attaches: number[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A server's memory, and how much of it is LevelDB's tables mapped into it. */
type Reading = Memory & {
  /** Resident bytes of the mapped LevelDB table files (`.ldb`, `.sst`); NaN off Linux. */
  tables: number;
};

/** Resident bytes of the LevelDB tables process `pid` maps, from /proc/PID/smaps. */
async function mappedTables(pid: number): Promise<number> {
  const smaps = await readFile(`/proc/${pid}/smaps`, "utf8").catch(() => undefined);
  if (smaps === undefined) return Number.NaN;
  let total = 0;
  let table = false;
  for (const line of smaps.split("\n")) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) table = /\.(ldb|sst)$/.test(line);
    else if (table && line.startsWith("Rss:"))
      total += Number(/(\d+) kB/.exec(line)?.[1] ?? 0) * 1024;
  }
  return total;
}

/**
 * The servers' memory once settled: full GCs in each (`memory`, which first waits for the child's
 * start-up to settle), `idleMs` with nothing to do, then the reading, after full GCs again, one
 * server after the other (the others still idle).
 */
async function settledMemory(runs: readonly Running[], idleMs: number): Promise<Reading[]> {
  for (const run of runs) await run.stack.parkway.call<Memory>("memory");
  await sleep(idleMs);
  const out: Reading[] = [];
  for (const run of runs) {
    const memory = await run.stack.parkway.call<Memory>("memory");
    out.push({ ...memory, tables: await mappedTables(run.stack.parkway.pid) });
  }
  return out;
}

/** The next parked session of the sample (skipping those resumed by earlier runs). */
async function nextParked(run: Running): Promise<string> {
  for (;;) {
    const i = run.candidates.shift();
    if (i === undefined) {
      throw new Error(`too few parked sessions left in the ${run.size} data set; delete it`);
    }
    const id = parkedId(i);
    const view = await run.stack.client.getSession(id);
    if (view.status === SessionStatus.SESSION_STATUS_AWAITING_PERMISSION) return id;
  }
}

/**
 * One round: starts Parkway on every data set at once, then resumes one session per data set in
 * turn (the order rotating), so load on the shared machine falls on every size alike.
 */
async function measureRound(
  config: BenchConfig,
  sets: readonly ParkedData[],
  idleMs: number,
): Promise<RoundResult[]> {
  const runs: Running[] = [];
  const results: RoundResult[] = [];
  try {
    for (const data of sets) {
      const stack = await startStack(config, { dataDir: data.dir, profile: `parked-${data.size}` });
      const candidates = sampleIndices(data.size, config.resumeSamples * 3);
      runs.push({ size: data.size, data, stack, candidates, ids: [], resumes: [], attaches: [] });
    }
    const atStart = await settledMemory(runs, idleMs);
    for (const run of runs) await run.stack.parkway.call("storeTimes");
    for (let k = 0; k < config.resumeSamples; k++) {
      for (let j = 0; j < runs.length; j++) {
        const run = runs[(j + k) % runs.length]!;
        const id = await nextParked(run);
        const t = await resumeOne(run.stack, id);
        run.resumes.push(t.resume);
        run.attaches.push(t.attach);
        run.ids.push(id);
      }
    }
    const stores: OpTimes[] = [];
    for (const run of runs) stores.push(await run.stack.parkway.call<OpTimes>("storeTimes"));
    const memory = await settledMemory(runs, idleMs);
    for (const [i, run] of runs.entries()) {
      const t0 = performance.now();
      await run.stack.client.createSession({ agentId: "bench" });
      const firstCreate = (performance.now() - t0) * 1000;
      results.push({
        resumes: run.resumes,
        attaches: run.attaches,
        memory: memory[i]!,
        atStart: atStart[i]!,
        firstCreate,
        store: stores[i]!,
        ids: run.ids,
      });
    }
  } finally {
    for (const run of runs) {
      await run.stack.close();
      await noteResumed(run.data, run.ids.length);
    }
  }
  return results;
}

/** The reading of the median process, by RSS (the lower middle one of an even count). */
function medianByRss(readings: readonly Reading[]): Reading {
  const mid = median(readings.map((m) => m.rss));
  return readings.find((m) => m.rss === mid)!;
}

/** Every data set, `ROUNDS` rounds (see `measureRound`), then the bare store reader on each. */
async function measureAll(config: BenchConfig): Promise<SizeResult[]> {
  const rounds = config.smoke ? 1 : ROUNDS;
  const idleMs = config.smoke ? 0 : IDLE_MS;
  const sets: ParkedData[] = [];
  for (const size of config.parkedSizes) {
    // Rebuilt once a quarter of the set may have been resumed (or too few are left for this run),
    // so the samples find parked ones.
    const needed = rounds * config.resumeSamples * 2;
    const reserve = Math.min(size, Math.max(Math.ceil(size * 0.75), needed));
    sets.push(await parkedData(config.dataCache, size, reserve));
  }
  const byRound: RoundResult[][] = [];
  for (let r = 0; r < rounds; r++) byRound.push(await measureRound(config, sets, idleMs));
  const results: SizeResult[] = [];
  for (const [i, data] of sets.entries()) {
    const mine = byRound.map((round) => round[i]!);
    const probe = await startChild<object>(childScript("store-probe.ts"), { dir: data.dir });
    const read = (await probe.call<{ memory: Memory }>("read", mine.at(-1)!.ids)).memory;
    const bare = { ...read, tables: await mappedTables(probe.pid) };
    await probe.close();
    results.push({
      size: data.size,
      resume: summarize(mine.flatMap((m) => m.resumes)),
      attach: summarize(mine.flatMap((m) => m.attaches)),
      memory: medianByRss(mine.map((m) => m.memory)),
      atStart: medianByRss(mine.map((m) => m.atStart)),
      rss: mine.map((m) => m.memory.rss),
      rssAtStart: mine.map((m) => m.atStart.rss),
      processes: rounds,
      idleMs,
      bare,
      buildSeconds: data.buildSeconds,
      cached: data.cached,
      firstCreate: median(mine.map((m) => m.firstCreate)),
      store: mine.reduce<OpTimes>((all, m) => mergeOps(all, m.store), {}),
    });
  }
  return results;
}

const count = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));

export async function parkedScale(config: BenchConfig): Promise<Row[]> {
  const [ref, ...rest] = await measureAll(config);
  if (!ref) return [];
  const rows: Row[] = [];
  const us = (v: number) => `${Math.round(v)} µs`;
  for (const r of rest) {
    const built = (x: SizeResult) =>
      `${count(x.size)} data set ${x.cached ? "cached, built" : "built"} in ${Math.round(x.buildSeconds)} s`;
    rows.push(
      row(
        {
          id: `parked.resume.${r.size}`,
          name: `Resume (confirm → REPLY_END), ${count(r.size)} vs ${count(ref.size)} parked replies`,
          unit: "us",
          parkway: latency(`${count(r.size)} parked`, r.resume),
          baseline: latency(`${count(ref.size)} parked, same run`, ref.resume),
          note:
            `${r.resume.n} sessions drawn at random over the whole key space resumed one at a time in random order, ${r.resume.n / r.processes} in each of ${r.processes} processes one after the other (noop tool, one scripted model call). ` +
            `Attach → re-announced REQUIRE_USER_CONFIRM: p50 ${us(r.attach.p50)} at ${count(r.size)}, ${us(ref.attach.p50)} at ${count(ref.size)}. ` +
            `The first CreateSession after the start took ${us(r.firstCreate)} at ${count(r.size)}, ${us(ref.firstCreate)} at ${count(ref.size)}. ` +
            `${built(r)}; ${built(ref)}. ${describeStoreTimes(r.store, r.resume.n, `resume at ${count(r.size)} (GetSession, attach, confirm, end)`)}`,
        },
        { maxRatio: 1.5, text: "p50 within 1.5×" },
      ),
    );
    rows.push(
      row(
        {
          id: `parked.rss.${r.size}`,
          name: `Server RSS, ${count(r.size)} vs ${count(ref.size)} parked replies`,
          unit: "mb",
          parkway: single(`${count(r.size)} parked, after the resumes`, r.memory.rss / MB),
          baseline: single(`${count(ref.size)} parked, same run`, ref.memory.rss / MB),
          note:
            `Median of ${r.processes} processes per data set (RSS after the resumes ${list(r.rss)} at ${count(r.size)}, ${list(ref.rss)} at ${count(ref.size)}), ` +
            `each read once settled: a full GC, ${r.idleMs / 1000} s idle, a full GC (V8 gives back the young generation it grew). ` +
            `Right after the start, settled the same way: RSS ${mb(r.atStart.rss)} vs ${mb(ref.atStart.rss)} (anonymous ${mb(r.atStart.rssAnon)} vs ${mb(ref.atStart.rssAnon)}; ${list(r.rssAtStart)} vs ${list(ref.rssAtStart)}). ` +
            `After the resumes: anonymous ${mb(r.memory.rssAnon)} vs ${mb(ref.memory.rssAnon)}; ` +
            `file-backed ${mb(r.memory.rssFile)} vs ${mb(ref.memory.rssFile)}, of which LevelDB's memory-mapped tables ${mb(r.memory.tables)} vs ${mb(ref.memory.tables)} (the rest is the node binary and its libraries); ` +
            `JS heap ${mb(r.memory.heapUsed)} vs ${mb(ref.memory.heapUsed)}. ` +
            `A bare classic-level process reading the records of the last process's sessions: RSS ${mb(r.bare.rss)} vs ${mb(ref.bare.rss)} ` +
            `(anonymous ${mb(r.bare.rssAnon)} vs ${mb(ref.bare.rssAnon)}, mapped tables ${mb(r.bare.tables)} vs ${mb(ref.bare.tables)}). ` +
            `"Flat" is read as within 1.2×.`,
        },
        { maxRatio: 1.2, text: "flat (≤ 1.2×)" },
      ),
    );
  }
  return rows;
}
