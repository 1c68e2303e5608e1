import { describe, expect, it } from "vitest";
import { VISIBLE_AHEAD } from "../../src/session/seq-epoch.js";
import { checkJumps, type WatchedSession } from "./stream-watchers.js";

/** A session whose stream saw `seen` and crossed `jumps`. */
function watched(seen: number[], jumps: [number, number][]): WatchedSession {
  return {
    index: 1,
    id: "s",
    watchedSeq: seen.at(-1) ?? 0,
    seen: new Map(seen.map((seq) => [seq, `evt_${seq}`])),
    jumps,
  };
}

const range = (first: number, last: number) =>
  Array.from({ length: last - first + 1 }, (_, i) => first + i);

function violations(s: WatchedSession, stored: number[]): string[] {
  const found: string[] = [];
  checkJumps(s, new Set(stored), (text) => found.push(text));
  return found;
}

describe("a stream's gaps, checked against the stored log", () => {
  // A node showed 17280–17289 before their write, lost its lease, and the next holder skipped
  // past them from the stored 17279: a stream following the session there crossed the gap.
  const next = 17_279 + VISIBLE_AHEAD + 1;

  it("accepts a skip taken from the last stored event, past events the stream saw and lost", () => {
    const s = watched([...range(17_270, 17_289), next], [[17_289, next]]);
    expect(violations(s, [...range(1, 17_279), next])).toEqual([]);
  });

  it("refuses the same gap when the events the stream saw before it are stored", () => {
    const s = watched([...range(17_270, 17_289), next], [[17_289, next]]);
    expect(violations(s, [...range(1, 17_289), next])).toEqual([
      `session s1: its stream got seq ${next} after 17289 (17289 stored before)`,
    ]);
  });

  it("refuses a gap over stored events the stream never got", () => {
    const s = watched([...range(1, 10), 40 + VISIBLE_AHEAD], [[10, 40 + VISIBLE_AHEAD]]);
    expect(violations(s, [...range(1, 20), 40 + VISIBLE_AHEAD])).toHaveLength(1);
  });

  it("refuses a gap that is no crash's skip from the stored log", () => {
    const s = watched([...range(1, 12), 500], [[12, 500]]);
    expect(violations(s, [...range(1, 10), 500])).toHaveLength(1);
  });
});
