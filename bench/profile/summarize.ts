/**
 * Summarises V8 CPU profiles (`node --cpu-prof`, written by `npm run bench -- --profile`): self time
 * by area (Parkway's layers, grpc-js, LevelDB, the openai SDK, zod, Node internals, GC) and by
 * function, as markdown. Native frames without a script count towards their caller's area, and
 * everything under module loading is set apart as start-up.
 *
 *   node --import tsx bench/profile/summarize.ts FILE.cpuprofile... [--top 25]
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const STARTUP = "start-up (module loading)";

/** The area of a frame with a script URL. */
function areaOfUrl(url: string): string {
  const src = /\/src\/([a-z-]+)\//.exec(url);
  if (src && !url.includes("node_modules")) return `parkway src/${src[1]}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith("node:internal/")) return `node:internal/${url.split("/")[1]}`;
  if (url.startsWith("node:")) return url.split("/")[0]!;
  return path.basename(url);
}

/** Area of every node: its own, its caller's for native frames, start-up under module loading. */
function areas(profile: Profile): Map<number, string> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const out = new Map<number, string>();
  const visit = (id: number, inherited: string, startup: boolean) => {
    const node = byId.get(id);
    if (!node) return;
    const { functionName, url } = node.callFrame;
    const loading = startup || url.startsWith("node:internal/modules/") || url.includes("/tsx/");
    let area = url ? areaOfUrl(url) : inherited;
    if (functionName === "(garbage collector)") area = "GC";
    else if (functionName === "(program)") area = "V8 (program)";
    else if (functionName === "(idle)") area = "idle";
    else if (loading) area = STARTUP;
    out.set(id, area);
    for (const child of node.children ?? []) visit(child, area, loading);
  };
  const children = new Set(profile.nodes.flatMap((n) => n.children ?? []));
  for (const n of profile.nodes) if (!children.has(n.id)) visit(n.id, "native", false);
  return out;
}

/** Self time (µs) by area and by function. */
export function selfTimes(profile: Profile): {
  byArea: Map<string, number>;
  byFunction: Map<string, number>;
} {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const areaOf = areas(profile);
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id);
    if (!node) return;
    const area = areaOf.get(id) ?? "native";
    byArea.set(area, (byArea.get(area) ?? 0) + dt);
    if (area === "idle" || area === STARTUP) return;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url
      ? ` ${url.replace(/^.*\/(node_modules|src)\//, "$1/")}:${lineNumber + 1}`
      : "";
    const name = `${functionName || "(anonymous)"}${where} [${area}]`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + dt);
  });
  return { byArea, byFunction };
}

function table(map: Map<string, number>, top: number, busy: number): string[] {
  const rows = [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    "| self ms | % of busy | |",
    "|---:|---:|---|",
    ...rows.map(
      ([k, v]) =>
        `| ${(v / 1000).toFixed(1)} | ${((100 * v) / busy).toFixed(1)} | ${k.replace(/\|/g, "\\|")} |`,
    ),
  ];
}

/** Markdown for one profile; percentages are of the busy time after start-up. */
export async function summarize(file: string, top = 25): Promise<string> {
  const profile = JSON.parse(await readFile(file, "utf8")) as Profile;
  const { byArea, byFunction } = selfTimes(profile);
  const total = [...byArea.values()].reduce((a, b) => a + b, 0);
  const idle = byArea.get("idle") ?? 0;
  const startup = byArea.get(STARTUP) ?? 0;
  const busy = Math.max(1, total - idle - startup);
  byArea.delete("idle");
  byArea.delete(STARTUP);
  return [
    `### ${path.basename(path.dirname(file))}: ${path.basename(file)}`,
    "",
    `${(total / 1e6).toFixed(2)} s profiled: ${(busy / 1e6).toFixed(2)} s busy after start-up, ` +
      `${(startup / 1e6).toFixed(2)} s loading modules, ${(idle / 1e6).toFixed(2)} s idle.`,
    "",
    ...table(byArea, 20, busy),
    "",
    ...table(byFunction, top, busy),
    "",
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: "string", default: "25" } },
  });
  for (const file of positionals) process.stdout.write(await summarize(file, Number(values.top)));
}
