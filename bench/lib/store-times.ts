import type { OpTimes } from "../servers/timed-store.js";
import { summarize } from "./stats.js";

export type { OpTimes };

/** Adds the operations of `more` to `into`. */
export function mergeOps(into: OpTimes, more: OpTimes): OpTimes {
  for (const [kind, ops] of Object.entries(more)) (into[kind] ??= []).push(...ops);
  return into;
}

/**
 * One line on the server's store operations during a measurement (from the Parkway child's timed
 * store): for each kind, how many per `unit` and their p50 / p99 durations in µs.
 */
export function describeStoreTimes(times: OpTimes, units: number, unit: string): string {
  const parts = Object.entries(times)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, ops]) => {
      const s = summarize(ops.map(([start, end]) => end - start));
      const per = (ops.length / Math.max(1, units)).toFixed(1);
      return `${kind} ×${per} (p50 ${Math.round(s.p50)} µs, p99 ${Math.round(s.p99)} µs)`;
    });
  return parts.length ? `Store operations per ${unit}: ${parts.join(", ")}.` : "";
}
