/**
 * Parked replies cost no memory, and resuming one does not slow down as they pile up. For each
 * data set (1k, 100k, 1M parked replies by default, written straight into the store, see
 * bench/lib/parked-data.ts) Parkway runs on the data directory in its own child process, all at
 * once; sessions spread over each key space are resumed one at a time, one data set after the
 * other in turn: attach (the pending call is re-announced), then confirm → REPLY_END is timed
 * (the noop tool runs, one model call, the reply ends). Server RSS is read after GC once the
 * sample is done. Each data set is compared with the smallest one of the same run; a bare
 * classic-level process reading the same records gives the store's own memory for context.
 */
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
import { type Summary, summarize } from "../lib/stats.js";
import { describeStoreTimes, type OpTimes } from "../lib/store-times.js";

interface SizeResult {
  size: number;
  resume: Summary;
  attach: Summary;
  memory: Memory;
  /** Right after the start, before any resume. */
  atStart: Memory;
  bare: Memory;
  buildSeconds: number;
  cached: boolean;
  /** µs of the first CreateSession after the start (it may count the tenant's sessions). */
  firstCreate: number;
  store: OpTimes;
}

const MB = 2 ** 20;
const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;

/** One data set with Parkway running on it, and what was measured there. */
interface Running {
  size: number;
  data: ParkedData;
  stack: Stack;
  candidates: number[];
  ids: string[];
  resumes: number[];
  attaches: number[];
  atStart?: Memory;
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
 * Starts Parkway on every data set at once, then resumes one session per data set in turn (the
 * order rotating), so load on the shared machine falls on every size alike.
 */
async function measureAll(config: BenchConfig): Promise<SizeResult[]> {
  const runs: Running[] = [];
  const results: SizeResult[] = [];
  try {
    for (const size of config.parkedSizes) {
      // Rebuilt once a quarter of the set may have been resumed, so the sample finds parked ones.
      const data = await parkedData(config.dataCache, size, Math.ceil(size * 0.75));
      const stack = await startStack(config, { dataDir: data.dir, profile: `parked-${size}` });
      const candidates = sampleIndices(size, config.resumeSamples * 3);
      runs.push({ size, data, stack, candidates, ids: [], resumes: [], attaches: [] });
    }
    for (const run of runs) {
      await run.stack.parkway.call("storeTimes");
      run.atStart = await run.stack.parkway.call<Memory>("memory");
    }
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
    for (const run of runs) {
      const store = await run.stack.parkway.call<OpTimes>("storeTimes");
      const memory = await run.stack.parkway.call<Memory>("memory");
      const t0 = performance.now();
      await run.stack.client.createSession({ agentId: "bench" });
      const firstCreate = (performance.now() - t0) * 1000;
      results.push({
        size: run.size,
        resume: summarize(run.resumes),
        attach: summarize(run.attaches),
        memory,
        atStart: run.atStart!,
        bare: memory, // replaced below, once the servers are gone
        buildSeconds: run.data.buildSeconds,
        cached: run.data.cached,
        firstCreate,
        store,
      });
    }
  } finally {
    for (const run of runs) {
      await run.stack.close();
      await noteResumed(run.data, run.ids.length);
    }
  }
  for (const [i, run] of runs.entries()) {
    const probe = await startChild<object>(childScript("store-probe.ts"), { dir: run.data.dir });
    results[i]!.bare = (await probe.call<{ memory: Memory }>("read", run.ids)).memory;
    await probe.close();
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
            `${r.resume.n} sessions spread over the key space resumed one at a time (noop tool, one scripted model call). ` +
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
            `Right after the start: RSS ${mb(r.atStart.rss)} vs ${mb(ref.atStart.rss)} (anonymous ${mb(r.atStart.rssAnon)} vs ${mb(ref.atStart.rssAnon)}). ` +
            `After the resumes: anonymous ${mb(r.memory.rssAnon)} vs ${mb(ref.memory.rssAnon)}, ` +
            `file-backed (LevelDB's memory-mapped tables) ${mb(r.memory.rssFile)} vs ${mb(ref.memory.rssFile)}; ` +
            `JS heap ${mb(r.memory.heapUsed)} vs ${mb(ref.memory.heapUsed)}. ` +
            `A bare classic-level process reading the same records: RSS ${mb(r.bare.rss)} vs ${mb(ref.bare.rss)} ` +
            `(anonymous ${mb(r.bare.rssAnon)} vs ${mb(ref.bare.rssAnon)}). ` +
            `"Flat" is read as within 1.2×.`,
        },
        { maxRatio: 1.2, text: "flat (≤ 1.2×)" },
      ),
    );
  }
  return rows;
}
