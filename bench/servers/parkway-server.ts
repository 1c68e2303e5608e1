/**
 * Child process: Parkway started in-process with `startParkway`, on a given data directory, with one
 * agent "bench" whose only tool is `bench_noop` (not read-only, so every call asks for a
 * confirmation, and running it costs nothing). Its store is timed (see timed-store.ts). Driven over
 * IPC by bench/lib/child.ts.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { pino } from "pino";
import { parseConfig } from "../../src/config/index.js";
import { startParkway } from "../../src/runtime/start-parkway.js";
import { createLevelStore } from "../../src/store/level-store.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { serveIpc } from "../lib/child.js";
import { NOOP_TOOL } from "../lib/model.js";
import { StoreTimes, timedStore } from "./timed-store.js";

export interface ParkwayServerArgs {
  data: string;
  modelUrl: string;
}

const noop = defineTool({
  name: NOOP_TOOL,
  description: "Does nothing; used by the benchmarks.",
  input: z.looseObject({}),
  readOnly: false,
  run: () => Promise.resolve("ok"),
});

const args = JSON.parse(process.argv[2] ?? "{}") as ParkwayServerArgs;
const workdir = path.join(args.data, "..", "work");
await mkdir(workdir, { recursive: true });
const times = new StoreTimes();
const startedAt = process.hrtime.bigint();
const parkway = await startParkway({
  config: parseConfig({
    listen: "127.0.0.1:0",
    data: args.data,
    logLevel: "silent",
    model: { url: args.modelUrl, name: "scripted", maxRetries: 0 },
    agents: [{ id: "bench", workingDirectories: [workdir], tools: [] }],
    // The load is the benchmark's: no rate limit on inputs, room for every session and reply.
    limits: { inputsPerSecond: 1e9, sessionsPerTenant: 1e9, runningReplies: 100_000 },
  }),
  // Warnings and errors only, to stderr: a failure shows up in the run's output.
  log: pino({ level: "warn", base: { service: "parkway-bench" } }, pino.destination(2)),
  tools: [noop],
  store: timedStore(createLevelStore(args.data), times),
});
const startUs = Number(process.hrtime.bigint() - startedAt) / 1000;

serveIpc(
  { address: parkway.address, startUs },
  {
    /** The store operations' durations since the last call, by kind (µs). */
    storeTimes: () => times.take(),
    close: () => parkway.close(),
  },
);
