/**
 * Child process: restart to SERVING, side by side with a bare classic-level open. Each round opens
 * and closes every given data directory both ways, in an order that rotates from round to round:
 * `startParkway` of the compiled server (dist/, as users run it) until it resolves (store open,
 * start-up recovery, expiry scan, health SERVING), and `new ClassicLevel(dir).open()`. Durations
 * in µs, by directory name and way.
 */
import path from "node:path";
import { ClassicLevel } from "classic-level";
import type * as Sources from "../../src/index.js";
import { serveIpc } from "../lib/child.js";

const { parseConfig, startParkway } = (await import(
  new URL("../../dist/index.js", import.meta.url).href
)) as typeof Sources;
const silentLogger: Sources.Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silentLogger,
};

export interface RestartArgs {
  dirs: Record<string, string>;
  rounds: number;
}

const { dirs, rounds } = JSON.parse(process.argv[2] ?? "{}") as RestartArgs;
const elapsed = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1000;

async function parkway(dir: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  const running = await startParkway({
    config: parseConfig({
      listen: "127.0.0.1:0",
      data: dir,
      logLevel: "silent",
      // Never called: nothing runs during a restart.
      model: { url: "http://127.0.0.1:9/v1", name: "scripted", maxRetries: 0 },
      agents: [{ id: "bench", workingDirectories: [path.join(dir, "..", "work")], tools: [] }],
    }),
    log: silentLogger,
  });
  const us = elapsed(t0);
  await running.close();
  return us;
}

async function bare(dir: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  const db = new ClassicLevel(dir);
  await db.open();
  const us = elapsed(t0);
  await db.close();
  return us;
}

const steps = Object.entries(dirs).flatMap(([name, dir]) => [
  { key: `${name}/parkway`, run: () => parkway(dir) },
  { key: `${name}/bare`, run: () => bare(dir) },
]);
const samples: Record<string, number[]> = Object.fromEntries(steps.map((s) => [s.key, []]));
for (let i = 0; i < rounds; i++) {
  for (let j = 0; j < steps.length; j++) {
    const step = steps[(i + j) % steps.length]!;
    samples[step.key]!.push(await step.run());
  }
}
serveIpc(samples, { close: () => undefined });
