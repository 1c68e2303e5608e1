import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runServe, spawnServer } from "../helpers/spawn-server.js";
import { mountSmallDisk, type SmallDisk } from "../helpers/store-faults.js";

let disk: SmallDisk | undefined;
let skipped = "";

beforeAll(async () => {
  const mounted = await mountSmallDisk("1m");
  if ("skipped" in mounted) skipped = mounted.skipped;
  else disk = mounted;
});

afterAll(async () => {
  await disk?.unmount();
});

describe("starting on a full disk (tmpfs)", () => {
  it("exits with one line naming the data directory and the full disk, then starts once there is space", async (ctx) => {
    if (!disk) {
      console.warn(`skipped: ${skipped}`);
      ctx.skip();
      return;
    }
    const dataDir = path.join(disk.dir, "data");
    await disk.fill();
    const full = await runServe(["--data", dataDir, "--listen", "127.0.0.1:0"]);
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(
      new RegExp(
        `^parkway: cannot open the store in ${dataDir}: IO error: \\S+: No space left on device\\n$`,
      ),
    );

    // With space again, the same directory opens: the failed start damaged nothing.
    await disk.free();
    const server = await spawnServer({ dataDir, direct: true });
    expect(await server.stop()).toBe(0);
  }, 120_000);
});
