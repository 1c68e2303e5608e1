/**
 * `npm run bench` runs every benchmark and writes bench/results/latest.json and bench/RESULTS.md;
 * `npm run bench:smoke` runs each at tiny sizes (but the LangGraph rows, which install LangGraph:
 * `--smoke --only=langgraph`) and writes into a temporary directory. Runs with
 * --only or --profile write into bench/results/tmp instead.
 *
 * Flags: --smoke; --only=input,park,...; --parked=1000,100000,1000000 (parked-reply data sets, the
 * first is the reference); --profile (CPU profiles of the Parkway server and heap snapshots around
 * the idle streams into bench/results/tmp/profiles, summarised into results/profiles.md; numbers
 * measured while profiling are slower); --out=DIR.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type BenchConfig, fullConfig, smokeConfig } from "./lib/config.js";
import { pinLoadSide } from "./lib/cores.js";
import { toMarkdown, writeResults } from "./lib/report.js";
import { runSuites } from "./lib/runner.js";
import { writeProfileReport } from "./profile/report.js";
import { SUITES } from "./suites/index.js";

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));

const { values } = parseArgs({
  options: {
    smoke: { type: "boolean", default: false },
    only: { type: "string" },
    parked: { type: "string" },
    profile: { type: "boolean", default: false },
    out: { type: "string" },
  },
});

pinLoadSide();
const scratch = await mkdtemp(path.join(tmpdir(), "parkway-bench-"));
const config: BenchConfig = values.smoke ? smokeConfig(scratch) : fullConfig(scratch);
if (values.parked) {
  config.parkedSizes = values.parked.split(",").map((s) => Number(s.replace(/_/g, "")));
  if (!config.parkedSizes.includes(config.restartParked)) {
    config.restartParked = config.parkedSizes[Math.min(1, config.parkedSizes.length - 1)]!;
  }
}
if (values.profile) {
  config.profileDir = path.join(BENCH_DIR, "results", "tmp", "profiles");
  await rm(config.profileDir, { recursive: true, force: true });
}

const only = values.only?.split(",");
/**
 * Left out of a smoke run unless named with --only: it installs LangGraph from PyPI into a virtual
 * environment of its own, minutes on a fresh machine.
 */
const NOT_IN_SMOKE = ["langgraph"];
const suites = Object.fromEntries(
  Object.entries(SUITES).filter(([name]) =>
    only ? only.includes(name) : !(config.smoke && NOT_IN_SMOKE.includes(name)),
  ),
);
const results = await runSuites(config, suites);

await rm(scratch, { recursive: true, force: true });

// Only a full run publishes: smoke, partial and profiled runs write elsewhere.
const published = !values.out && !config.smoke && !config.profileDir && !only;
const outDir =
  values.out ??
  (config.smoke
    ? await mkdtemp(path.join(tmpdir(), "parkway-bench-smoke-"))
    : path.join(BENCH_DIR, "results", published ? "" : "tmp"));
const files = {
  json: path.join(outDir, config.smoke ? "smoke.json" : "latest.json"),
  markdown: published ? path.join(BENCH_DIR, "RESULTS.md") : path.join(outDir, "RESULTS.md"),
};
await writeResults(results, files);
process.stdout.write(toMarkdown(results));
process.stdout.write(`\nwrote ${files.json} and ${files.markdown}\n`);
if (config.profileDir) {
  const report = path.join(outDir, "profiles.md");
  await writeProfileReport(config.profileDir, report, config.idleStreams);
  process.stdout.write(`wrote ${report} (profiles in ${config.profileDir})\n`);
}
process.exit(results.failures.length > 0 ? 1 : 0);
