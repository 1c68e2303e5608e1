/**
 * Restart to SERVING, independent of the number of parked replies. In one child process (modules
 * loaded, as in a restarted server once Node is up), the compiled Parkway is started and closed
 * repeatedly with `startParkway` (store open, start-up recovery, expiry scan, health SERVING), interleaved
 * with bare classic-level opens: on a directory with 0 parked replies (fresh) and on one with
 * `restartParked` (a cached data set of bench/lib/parked-data.ts).
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { benchScript as childScript, startChild } from "../lib/child.js";
import type { BenchConfig } from "../lib/config.js";
import { parkedData } from "../lib/parked-data.js";
import { latency, type Row, row } from "../lib/rows.js";
import { ensureBuilt, scratchDir } from "../lib/stack.js";
import type { RestartArgs } from "../servers/restart-probe.js";
import { type Summary, summarize } from "../lib/stats.js";

interface Restarts {
  parkway: Summary;
  bare: Summary;
}

/** Restarts on an empty directory and on `dir`, interleaved in one process. */
async function restarts(
  config: BenchConfig,
  dirs: { empty: string; parked: string },
): Promise<{ zero: Restarts; many: Restarts }> {
  const probe = await startChild<Record<string, number[]>>(
    childScript("restart-probe.ts"),
    { dirs, rounds: config.restarts } satisfies RestartArgs,
    config.profileDir ? { cpuProfDir: path.join(config.profileDir, "restart") } : {},
  );
  await probe.close();
  const of = (name: string) => ({
    parkway: summarize(probe.ready[`${name}/parkway`] ?? []),
    bare: summarize(probe.ready[`${name}/bare`] ?? []),
  });
  return { zero: of("empty"), many: of("parked") };
}

const count = (n: number) => (n >= 1e3 ? `${n / 1e3}k` : String(n));

export async function restart(config: BenchConfig): Promise<Row[]> {
  await ensureBuilt(); // the probe starts the compiled server
  const empty = path.join(await scratchDir(config, "restart"), "data");
  await mkdir(path.join(empty, "..", "work"), { recursive: true });
  const data = await parkedData(config.dataCache, config.restartParked);
  const { zero, many } = await restarts(config, { empty, parked: data.dir });
  const n = count(config.restartParked);
  const rounds = `${config.restarts} rounds in one process, each restarting on both directories both ways (order rotating)`;
  return [
    row({
      id: "restart.0",
      name: "Restart to SERVING, 0 parked replies",
      unit: "us",
      parkway: latency("startParkway → SERVING", zero.parkway),
      baseline: latency("bare classic-level open, same directory", zero.bare),
      note: `${rounds}; excludes Node's own start-up and module loading, which are the same for every data set.`,
    }),
    row({
      id: `restart.${config.restartParked}`,
      name: `Restart to SERVING, ${n} parked replies`,
      unit: "us",
      parkway: latency("startParkway → SERVING", many.parkway),
      baseline: latency("bare classic-level open, same directory", many.bare),
      note: `${rounds}.`,
    }),
    row(
      {
        id: "restart.independent",
        name: `Restart to SERVING, ${n} vs 0 parked replies`,
        unit: "us",
        parkway: latency(`${n} parked`, many.parkway),
        baseline: latency("0 parked, same run", zero.parkway),
        note: `Bare classic-level open: p50 ${Math.round(many.bare.p50)} µs with ${n}, ${Math.round(zero.bare.p50)} µs with 0. "Independent" is read as within 1.5× (no scan of the parked replies at start).`,
      },
      { maxRatio: 1.5, text: "independent (≤ 1.5×)" },
    ),
  ];
}
