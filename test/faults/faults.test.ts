import { expect, it } from "vitest";
import { runFaults } from "./fault-harness.js";

it("keeps every promise of durability through 20 SIGKILLs over 1,000 parks and answers", async () => {
  const report = await runFaults({
    kills: 20,
    minOps: 1000,
    sessions: 6,
    opsPerLife: [30, 90],
    // It stops as soon as both targets are reached (about 100 s on a quiet machine); the limit only
    // ends a run that cannot reach them, on a machine busy with other work.
    timeLimitMs: 480_000,
  });
  console.log(`fault harness: ${JSON.stringify(report)}`);
  expect(report.violations).toEqual([]);
  expect(report.kills).toBeGreaterThanOrEqual(20);
  expect(report.parks + report.answers).toBeGreaterThanOrEqual(1000);
  // The streams watched every session across the kills (their seqs are checked above).
  expect(report.streams?.streamed).toBeGreaterThan(1000);
}, 540_000);
