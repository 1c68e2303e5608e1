import { performance } from "node:perf_hooks";
import type { Store } from "../store/store.js";
import { ParkedRecord } from "./records.js";

/**
 * The parked replies in the store, by agent: one scan of the parked index (written with each park,
 * removed with the answer or the end), so the count is the same on every node sharing the store and
 * right after a restart. Costs one record read per parked reply (≈2.5 µs): not for a hot path; the
 * metrics read it through `ParkedGauge`. `agents` (the configured ones) are counted even with none
 * parked.
 */
export async function countParked(
  store: Store,
  agents: Iterable<string> = [],
): Promise<Map<string, number>> {
  // Every configured agent has a count, zero included, so its series does not vanish.
  const counts = new Map<string, number>([...agents].map((id) => [id, 0]));
  for await (const [, { agentId }] of store.entries(ParkedRecord)) {
    counts.set(agentId, (counts.get(agentId) ?? 0) + 1);
  }
  return counts;
}

/**
 * How long a count is reused, per parked reply it counted (ms): 50 times what counting one costs
 * (≈2.5 µs), so counting takes at most about 2% of the process's time.
 */
const REUSE_PER_REPLY_MS = 0.125;

/**
 * `countParked` for a gauge read at every scrape, its cost bounded as the store grows: a count is
 * reused for `REUSE_PER_REPLY_MS` per reply it counted, from when it began. A count of a thousand
 * parked replies is fresh 125 ms later, of 100k after 12.5 s, of a million after about two
 * minutes; none parked, at every read. Reads while a count is under way share it; a count that
 * fails is not kept.
 */
export class ParkedGauge {
  private last: { counts: ReadonlyMap<string, number>; until: number } | undefined;
  private counting: Promise<ReadonlyMap<string, number>> | undefined;

  constructor(
    private readonly count: () => Promise<ReadonlyMap<string, number>>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The parked replies by agent, as of the last count. */
  read(): Promise<ReadonlyMap<string, number>> {
    if (this.last && this.now() < this.last.until) return Promise.resolve(this.last.counts);
    this.counting ??= this.recount().finally(() => (this.counting = undefined));
    return this.counting;
  }

  private async recount(): Promise<ReadonlyMap<string, number>> {
    const began = this.now();
    const counts = await this.count();
    let parked = 0;
    for (const n of counts.values()) parked += n;
    this.last = { counts, until: began + parked * REUSE_PER_REPLY_MS };
    return counts;
  }
}
