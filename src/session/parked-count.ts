import type { Store } from "../store/store.js";
import { ParkedRecord } from "./records.js";

/**
 * The parked replies in the store, by agent: one scan of the parked index (written with each park,
 * removed with the answer or the end), so the count is the same on every node sharing the store and
 * right after a restart. Costs one record read per parked reply: meant for a scrape every few
 * seconds, not for a hot path. `agents` (the configured ones) are counted even with none parked.
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
