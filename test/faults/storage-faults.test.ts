import { afterAll, beforeAll, expect, it } from "vitest";
import { mountSmallDisk, type SmallDisk } from "../helpers/store-faults.js";
import { runStorageFaults } from "./storage-fault-harness.js";

const long = process.env.PARKWAY_FAULTS_LONG === "1";
/** Short mode (CI) and long mode (PARKWAY_FAULTS_LONG=1). */
const episodes = long ? 50 : 10;

let disk: SmallDisk | undefined;
let skipped = "";

beforeAll(async () => {
  const mounted = await mountSmallDisk("8m");
  if ("skipped" in mounted) skipped = mounted.skipped;
  else disk = mounted;
});

afterAll(async () => {
  await disk?.unmount();
});

it(`keeps every acknowledged write through ${episodes} full disks (ENOSPC) and restarts`, async (ctx) => {
  if (!disk) {
    console.warn(`skipped: ${skipped}`);
    ctx.skip();
    return;
  }
  const report = await runStorageFaults(disk, {
    episodes,
    drivers: 4,
    opsBeforeFill: [3, 25],
    exitWaitMs: [300, 1500],
    nearlyFullStarts: 0.2,
    timeLimitMs: long ? 1_500_000 : 240_000,
  });
  console.log(`storage fault harness: ${JSON.stringify(report)}`);
  expect(report.violations).toEqual([]);
  expect(report.episodes).toBeGreaterThanOrEqual(episodes);
}, 1_800_000);
