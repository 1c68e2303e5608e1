/**
 * Process start to SERVING and idle memory, as users run Parkway: `node bin/parkway.js serve` (the
 * compiled server in dist/) against a bare grpc-js server with only the health service, started the
 * same way (`node bare-health-server.mjs`), and against the same Parkway run from its TypeScript
 * sources through tsx. Each round spawns the process, reads its "listening" line, calls
 * grpc.health.v1.Health/Check until SERVING, then reads the process's resident memory once it has
 * been idle for a moment. The three kinds alternate, so load on the machine is shared fairly.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { type Client, credentials, makeGenericClientConstructor } from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";
import type { BenchConfig } from "../lib/config.js";
import { latency, type Row, row, single } from "../lib/rows.js";
import { scratchDir } from "../lib/stack.js";
import { median, nowUs, type Summary, summarize } from "../lib/stats.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const HealthClient = makeGenericClientConstructor(healthService, "Health");

type Kind = "compiled" | "tsx" | "bare";

function command(kind: Kind, dataDir: string): string[] {
  // A configured model endpoint, as in production: the built-in demo model is not started. Nothing
  // calls it during the measurement.
  const serve = ["serve", "--listen", "127.0.0.1:0", "--data", dataDir];
  const model = ["--model-url", "http://127.0.0.1:9/v1", "--model", "bench"];
  switch (kind) {
    case "compiled":
      return ["bin/parkway.js", ...serve, ...model];
    case "tsx":
      return ["--import", "tsx", "src/cli/main.ts", ...serve, ...model];
    case "bare":
      return ["bench/servers/bare-health-server.mjs"];
  }
}

function waitListening(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines: string[] = [];
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; address?: string };
        if (entry.msg === "listening" && entry.address) resolve(entry.address);
      } catch {
        // not a log line
      }
    });
    child.once("exit", (code) => reject(new Error(`exited with ${code}:\n${lines.join("\n")}`)));
  });
}

/** Health/Check until it answers SERVING (a fresh channel: what a probe or load balancer does). */
async function waitServing(address: string): Promise<void> {
  for (;;) {
    const client = new HealthClient(address, credentials.createInsecure()) as unknown as Client & {
      check(req: object, cb: (err: Error | null, res?: { status: string }) => void): void;
    };
    const status = await new Promise<string>((resolve) =>
      client.check({ service: "" }, (err, res) => resolve(err ? "error" : (res?.status ?? ""))),
    );
    client.close();
    if (status === "SERVING") return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  if (!kb) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

async function startOnce(
  kind: Kind,
  dataDir: string,
  idleMs: number,
): Promise<{ us: number; rss: number }> {
  const start = nowUs();
  const child = spawn(process.execPath, command(kind, dataDir), {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    await waitServing(await waitListening(child));
    const us = nowUs() - start;
    await new Promise((r) => setTimeout(r, idleMs));
    return { us, rss: await rssBytes(child.pid!) };
  } finally {
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    await exited;
  }
}

export async function startup(config: BenchConfig): Promise<Row[]> {
  const dir = await scratchDir(config, "startup");
  const rounds = config.smoke ? 2 : config.startups;
  const idleMs = config.smoke ? 200 : 2_000;
  const times: Record<Kind, number[]> = { compiled: [], tsx: [], bare: [] };
  const rss: Record<Kind, number[]> = { compiled: [], tsx: [], bare: [] };
  const dataDir = (kind: Kind) => path.join(dir, kind);
  for (const kind of ["compiled", "tsx"] as const) {
    await mkdir(dataDir(kind), { recursive: true });
    await startOnce(kind, dataDir(kind), 0); // creates the store: the rounds restart on it
  }
  const kinds: Kind[] = ["compiled", "bare", "tsx"];
  for (let i = 0; i < rounds; i++) {
    for (let k = 0; k < kinds.length; k++) {
      const kind = kinds[(i + k) % kinds.length]!;
      const r = await startOnce(kind, dataDir(kind), idleMs);
      times[kind].push(r.us);
      rss[kind].push(r.rss);
    }
  }
  const t: Record<Kind, Summary> = {
    compiled: summarize(times.compiled),
    tsx: summarize(times.tsx),
    bare: summarize(times.bare),
  };
  const mb = (kind: Kind) => median(rss[kind]) / (1024 * 1024);
  const how = `${rounds} rounds, each spawning the three processes in rotating order; a model endpoint is configured (the demo model is not started); the store exists (a restart)`;
  return [
    row({
      id: "startup.serving",
      name: "Process start to SERVING (compiled)",
      unit: "us",
      parkway: latency("node bin/parkway.js serve → Health SERVING", t.compiled),
      baseline: latency("bare grpc-js + health, node bare-health-server.mjs", t.bare),
      note: `${how}. Includes Node's own start-up, module loading, the store's open and recovery. Run from sources through tsx: p50 ${(t.tsx.p50 / 1000).toFixed(0)} ms.`,
    }),
    row({
      id: "startup.rss",
      name: "Idle RSS after start (compiled)",
      unit: "mb",
      parkway: single("node bin/parkway.js serve", mb("compiled"), rss.compiled.length),
      baseline: single("bare grpc-js + health", mb("bare"), rss.bare.length),
      note: `Median resident memory ${idleMs / 1000} s after SERVING, no client attached. Run from sources through tsx: ${mb("tsx").toFixed(1)} MB.`,
    }),
    row({
      id: "startup.compiled_vs_tsx",
      name: "Process start to SERVING, compiled vs run through tsx",
      unit: "us",
      parkway: latency("compiled (dist/)", t.compiled),
      baseline: latency("tsx on src/", t.tsx),
      note: `${how}. What \`npm start\` saves by running compiled JavaScript.`,
    }),
  ];
}
