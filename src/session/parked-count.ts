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

/** A recount waits until this many times what the last count took has passed since it began. */
const RECOUNT_AFTER = 50;

/**
 * `countParked` for a gauge read at every scrape, its cost bounded as the store grows: a count is
 * reused until `RECOUNT_AFTER` times what it took has passed since it began, so counting never
 * takes more than about 2% of the process's time. A count of a few milliseconds (thousands of
 * parked replies) is fresh at every scrape; one of 2.5 s (a million) is made every two minutes or
 * so. Reads while a count is under way share it; a count that fails is not kept.
 */
export class ParkedGauge {
  private last: { counts: ReadonlyMap<string, number>; began: number; took: number } | undefined;
  private counting: Promise<ReadonlyMap<string, number>> | undefined;

  constructor(
    private readonly count: () => Promise<ReadonlyMap<string, number>>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The parked replies by agent, as of the last count. */
  read(): Promise<ReadonlyMap<string, number>> {
    const last = this.last;
    if (last && this.now() - last.began < last.took * RECOUNT_AFTER) {
      return Promise.resolve(last.counts);
    }
    this.counting ??= this.recount().finally(() => (this.counting = undefined));
    return this.counting;
  }

  private async recount(): Promise<ReadonlyMap<string, number>> {
    const began = this.now();
    const counts = await this.count();
    this.last = { counts, began, took: this.now() - began };
    return counts;
  }
}
