import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import path from "node:path";
import { format } from "prettier";
import type { BenchConfig } from "./config.js";
import { describeCores } from "./cores.js";
import { formatFigure, type Row } from "./rows.js";

/** Everything one run produced: `bench/results/latest.json`. */
export interface Results {
  meta: {
    date: string;
    mode: "full" | "smoke";
    commit: string;
    node: string;
    cpus: number;
    cpuModel: string;
    memoryGb: number;
    /** 1-minute load average at the start and at the end (the machine is shared). */
    load: [number, number];
    /** How the cores were split between the servers under test and the load (`CoreSplit`). */
    cores: string;
    sizes: Record<string, unknown>;
    seconds: number;
  };
  rows: Row[];
  /** Suites that failed, with their error. */
  failures: { suite: string; error: string }[];
}

function commit(): string {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

/** The run's description. */
export function describeRun(
  config: BenchConfig,
  seconds: number,
  loadAtStart: number,
): Results["meta"] {
  return {
    date: new Date().toISOString(),
    mode: config.smoke ? "smoke" : "full",
    commit: commit(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryGb: Math.round(totalmem() / 2 ** 30),
    load: [loadAtStart, loadavg()[0]!],
    cores: describeCores(),
    sizes: {
      iterations: config.iterations,
      streamDeltas: config.streamDeltas,
      singleSessionReplies: config.singleSessionReplies,
      manySessions: config.manySessions,
      parkedSizes: config.parkedSizes,
      resumeSamples: config.resumeSamples,
      restarts: config.restarts,
      restartParked: config.restartParked,
      idleStreams: config.idleStreams,
    },
    seconds,
  };
}

function met(r: Row): string {
  if (!r.target) return "—";
  return r.target.met ? "✅ met" : "❌ missed";
}

/** The results as a markdown table with one note per row. */
export function toMarkdown(results: Results): string {
  const m = results.meta;
  const lines = [
    `Run ${m.date} (${m.mode}) at ${m.commit}: Node ${m.node}, ${m.cpus} × ${m.cpuModel}, ${m.memoryGb} GB; ` +
      `1-minute load average ${m.load[0].toFixed(1)} at the start, ${m.load[1].toFixed(1)} at the end; ${Math.round(m.seconds)} s; ${m.cores}.`,
    "Every baseline was measured in the same run, side by side with Parkway; ratios are Parkway ÷ baseline.",
    "",
    "| # | Row | Parkway | Baseline (same run) | Ratio | Target (docs/design.md §7) | Met |",
    "|---|-----|---------|---------------------|-------|--------------------|-----|",
  ];
  results.rows.forEach((r, i) => {
    const ratio = Number.isFinite(r.ratio) ? `${r.ratio.toFixed(2)}×` : "—";
    lines.push(
      `| ${i + 1} | ${r.name} | ${formatFigure(r.parkway, r.unit)} | ${formatFigure(r.baseline, r.unit)} | ${ratio} | ${r.target?.text ?? "—"} | ${met(r)} |`,
    );
  });
  lines.push("", "Notes:", "");
  results.rows.forEach((r, i) => lines.push(`${i + 1}. **${r.name}.** ${r.note}`));
  for (const f of results.failures) lines.push("", `**${f.suite} failed:** \`${f.error}\``);
  return lines.join("\n") + "\n";
}

/** Writes `latest.json` and the markdown into `dir` (`RESULTS.md` next to `results/`). */
export async function writeResults(
  results: Results,
  files: { json: string; markdown: string },
): Promise<void> {
  await mkdir(path.dirname(files.json), { recursive: true });
  await writeFile(files.json, JSON.stringify(results, null, 2) + "\n");
  const md = [
    "# Parkway benchmarks",
    "",
    "Produced by `npm run bench` (bench/run.ts); see bench/README.md for what each row measures.",
    "",
    toMarkdown(results),
  ].join("\n");
  // Formatted as the repository's `prettier --check` expects.
  await writeFile(files.markdown, await format(md, { parser: "markdown" }));
}
