/**
 * Child process: Parkway started in-process with `startParkway`, on a given data directory (or on
 * PostgreSQL at `databaseUrl`), with one agent "bench" whose only tool is `bench_noop` (not
 * read-only, so every call asks for a confirmation, and running it costs nothing). Its store is
 * timed (see timed-store.ts). With `compiled`, Parkway is the compiled server in dist/ (the library
 * entry and the PostgreSQL store module), as users run it; otherwise its TypeScript sources. Driven
 * over IPC by bench/lib/child.ts.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { pino } from "pino";
import type * as Sources from "../../src/index.js";
import type * as PostgresSources from "../../src/store/postgres/index.js";
import { serveIpc } from "../lib/child.js";
import { NOOP_TOOL } from "../lib/model.js";
import { StoreTimes, timedStore } from "./timed-store.js";

export interface ParkwayServerArgs {
  data: string;
  modelUrl: string;
  databaseUrl?: string;
  compiled?: boolean;
  /** Serve Prometheus metrics on this `HOST:PORT` (config `metrics.listen`). */
  metricsListen?: string;
}

type Library = typeof Sources;
type PostgresModule = typeof PostgresSources;

const args = JSON.parse(process.argv[2] ?? "{}") as ParkwayServerArgs;
const dist = (file: string) => new URL(`../../dist/${file}`, import.meta.url).href;
const { defineTool, parseConfig, startParkway, createLevelStore } = (
  args.compiled ? await import(dist("index.js")) : await import("../../src/index.js")
) as Library;
const postgres = args.databaseUrl
  ? ((args.compiled
      ? await import(dist("store/postgres/index.js"))
      : await import("../../src/store/postgres/index.js")) as PostgresModule)
  : undefined;

const noop = defineTool({
  name: NOOP_TOOL,
  description: "Does nothing; used by the benchmarks.",
  input: z.looseObject({}),
  readOnly: false,
  run: () => Promise.resolve("ok"),
});

const workdir = path.join(args.data, "..", "work");
await mkdir(workdir, { recursive: true });
const times = new StoreTimes();
const startedAt = process.hrtime.bigint();
const config = parseConfig({
  listen: "127.0.0.1:0",
  data: args.data,
  logLevel: "silent",
  model: { url: args.modelUrl, name: "scripted", maxRetries: 0 },
  agents: [{ id: "bench", workingDirectories: [workdir], tools: [] }],
  // The load is the benchmark's: no rate limit on inputs, room for every session and reply.
  limits: { inputsPerSecond: 1e9, sessionsPerTenant: 1e9, runningReplies: 100_000 },
  ...(args.databaseUrl ? { database: { url: args.databaseUrl } } : {}),
  ...(args.metricsListen ? { metrics: { listen: args.metricsListen } } : {}),
});
// The store `parkway serve` would open for this configuration (PostgreSQL at `database.url`, else
// LevelDB under `data`), timed.
const store =
  postgres && config.database.url
    ? postgres.createPostgresStore({ url: config.database.url, poolSize: config.database.poolSize })
    : createLevelStore(config.data);
const parkway = await startParkway({
  config,
  // Warnings and errors only, to stderr: a failure shows up in the run's output.
  log: pino({ level: "warn", base: { service: "parkway-bench" } }, pino.destination(2)),
  tools: [noop],
  store: timedStore(store, times),
});
const startUs = Number(process.hrtime.bigint() - startedAt) / 1000;

serveIpc(
  {
    address: parkway.address,
    startUs,
    ...(parkway.metricsUrl ? { metricsUrl: parkway.metricsUrl } : {}),
  },
  {
    /** The store operations' durations since the last call, by kind (µs). */
    storeTimes: () => times.take(),
    close: () => parkway.close(),
  },
);
