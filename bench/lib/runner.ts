import { loadavg } from "node:os";
import { setSettleSeconds } from "./child.js";
import type { BenchConfig } from "./config.js";
import { describeRun, type Results } from "./report.js";
import type { Row } from "./rows.js";

/** One benchmark: measures its rows, Parkway and baselines side by side. */
export type Suite = (config: BenchConfig) => Promise<Row[]>;

/**
 * Runs the suites in order (one at a time: the machine is small and shared), logging progress to
 * stderr. A failing suite is recorded and the others still run.
 */
export async function runSuites(
  config: BenchConfig,
  suites: Record<string, Suite>,
): Promise<Results> {
  setSettleSeconds(config.smoke ? 0 : 8);
  const started = Date.now();
  const load = loadavg()[0]!;
  const rows: Row[] = [];
  const failures: Results["failures"] = [];
  for (const [name, suite] of Object.entries(suites)) {
    const t0 = Date.now();
    process.stderr.write(`bench: ${name} ...\n`);
    try {
      const got = await suite(config);
      rows.push(...got);
      process.stderr.write(`bench: ${name} done in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    } catch (err) {
      const error = (err as Error).stack ?? String(err);
      failures.push({ suite: name, error: error.split("\n").slice(0, 3).join(" | ") });
      process.stderr.write(`bench: ${name} FAILED: ${error}\n`);
    }
  }
  return { meta: describeRun(config, (Date.now() - started) / 1000, load), rows, failures };
}
