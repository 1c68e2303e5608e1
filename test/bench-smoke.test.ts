import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import type { Results } from "../bench/lib/report.js";
import { hasNumbers } from "../bench/lib/rows.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The rows each benchmark must produce (ids up to the size, which the smoke mode shrinks). */
const EXPECTED = [
  "input.first_event",
  "input.ack",
  "park.fdatasync",
  "park.bare",
  "park.level_put",
  "stream.1",
  "stream.",
  "parked.resume.",
  "parked.rss.",
  "restart.0",
  "restart.independent",
  "startup.serving",
  "startup.rss",
  "startup.compiled_vs_tsx",
  "idle.memory",
  "model.overhead",
  "model.relay",
  "pg.park",
  "pg.resume",
  "pg.stream.1",
  "pg.first_delta",
  "pg.cross_node",
  "pg.stream.3nodes",
  "telemetry.input.both",
  "telemetry.park.both",
  "telemetry.stream.both",
  "clients.ts",
  "clients.go",
  "clients.py_asyncio",
  "clients.py_blocking",
];

// Runs `npm run bench:smoke` (every benchmark at tiny sizes) so the benchmarks cannot rot. Checks
// only that every row produced finite numbers: the machine is shared, so no timing is asserted.
describe("benchmarks, smoke mode", () => {
  it("runs every benchmark and reports numbers for every row", async () => {
    const out = await mkdtemp(path.join(tmpdir(), "parkway-bench-smoke-"));
    onTestFinished(() => rm(out, { recursive: true, force: true }));
    const child = spawn("node", ["--import", "tsx", "bench/run.ts", "--smoke", `--out=${out}`], {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code, stderr).toBe(0);

    const results = JSON.parse(await readFile(path.join(out, "smoke.json"), "utf8")) as Results;
    expect(results.failures).toEqual([]);
    const ids = results.rows.map((r) => r.id);
    for (const prefix of EXPECTED) {
      expect(
        ids.some((id) => id.startsWith(prefix)),
        `a row ${prefix}*`,
      ).toBe(true);
    }
    expect(ids.filter((id) => id.startsWith("stream.")).length).toBe(2);
    for (const row of results.rows) expect(hasNumbers(row), row.id).toBe(true);
    expect(await readFile(path.join(out, "RESULTS.md"), "utf8")).toMatch(/\|\s*Row\s*\|/);
  }, 360_000);
});
