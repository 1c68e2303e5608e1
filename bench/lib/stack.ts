import { execFile } from "node:child_process";
import { mkdir, mkdtemp } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import type { ScriptedModelServer } from "../../src/model/scripted/index.js";
import { type Child, benchScript as childScript, startChild } from "./child.js";
import type { BenchConfig } from "./config.js";
import { benchScript, scriptedModel } from "./model.js";
import { startTimingProxy, type TimingProxy } from "./timing-proxy.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** What the Parkway child reports once SERVING. */
export interface ParkwayReady {
  address: string;
  /** Microseconds `startParkway` took. */
  startUs: number;
  /** Where `/metrics` is served, when metrics are on (`StackOptions.metricsListen`). */
  metricsUrl?: string;
}

/**
 * The scripted model (in this process, unless `StackOptions.modelUrl` names another), Parkway (a
 * child process) and a client.
 */
export interface Stack {
  /** The scripted model in this process; absent when Parkway calls `StackOptions.modelUrl`. */
  model?: ScriptedModelServer;
  /** The timing proxy between Parkway and the model, when asked for. */
  proxy?: TimingProxy;
  parkway: Child<ParkwayReady>;
  client: ParkwayClient;
  dataDir: string;
  close(): Promise<void>;
}

/** A fresh directory under the run's scratch directory. */
export async function scratchDir(config: BenchConfig, prefix: string): Promise<string> {
  await mkdir(config.scratch, { recursive: true });
  return mkdtemp(path.join(config.scratch, `${prefix}-`));
}

/** How the Parkway child of a stack runs. */
export interface StackOptions {
  /** Its LevelDB directory (a fresh one by default; unused with `databaseUrl`). */
  dataDir?: string;
  /** Its store: PostgreSQL at this URL instead of LevelDB. */
  databaseUrl?: string;
  /**
   * Run the compiled server (dist/, built first when stale: see `ensureBuilt`), as users run it;
   * false runs its TypeScript sources through tsx. Default true.
   */
  compiled?: boolean;
  /** A timing proxy between Parkway and the model. */
  proxy?: boolean;
  /**
   * The model Parkway calls, already serving the benchmark's script (e.g. in a process of its own,
   * bench/servers/scripted-model.ts); by default a scripted model in this process.
   */
  modelUrl?: string;
  /** Names the CPU profile when the run profiles. */
  profile?: string;
  /** Serve Prometheus metrics on this `HOST:PORT` (config `metrics.listen`); off by default. */
  metricsListen?: string;
  /** Environment of the Parkway child on top of this process's (undefined removes a variable). */
  env?: Record<string, string | undefined>;
  /** The child's script: another checkout's `bench/servers/parkway-server.ts` (`compare.ts`). */
  serverScript?: string;
}

/**
 * Starts the scripted model, optionally the timing proxy in front of it, and Parkway in a child
 * process (see `StackOptions`).
 */
export async function startStack(config: BenchConfig, options: StackOptions = {}): Promise<Stack> {
  const compiled = options.compiled !== false;
  if (compiled) await ensureBuilt();
  const model = options.modelUrl
    ? undefined
    : await (
        await scriptedModel(compiled)
      ).startScriptedModel({ script: benchScript(config.streamDeltas) });
  const modelUrl = model?.url ?? options.modelUrl ?? "";
  const proxy = options.proxy ? await startTimingProxy(modelUrl) : undefined;
  const dataDir = options.dataDir ?? path.join(await scratchDir(config, "parkway"), "data");
  const parkway = await startChild<ParkwayReady>(
    options.serverScript ?? childScript("parkway-server.ts"),
    {
      data: dataDir,
      modelUrl: proxy?.url ?? modelUrl,
      ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
      ...(compiled ? { compiled: true } : {}),
      ...(options.metricsListen ? { metricsListen: options.metricsListen } : {}),
    },
    {
      ...(config.profileDir && options.profile
        ? { cpuProfDir: path.join(config.profileDir, options.profile) }
        : {}),
      ...(options.env ? { env: options.env } : {}),
      server: true,
    },
  );
  const client = createParkwayClient(parkway.ready.address);
  return {
    ...(model ? { model } : {}),
    ...(proxy ? { proxy } : {}),
    parkway,
    client,
    dataDir,
    async close() {
      client.close();
      await parkway.close();
      await proxy?.close();
      await model?.close();
    },
  };
}

let built: Promise<unknown> | undefined;

/**
 * Compiles the server into dist/ when a source changed since the last build (scripts/build.sh):
 * once per benchmark run.
 */
export function ensureBuilt(): Promise<unknown> {
  built ??= promisify(execFile)("bash", ["scripts/build.sh", "--if-stale"], { cwd: ROOT });
  return built;
}

/** The bare echo server in a child process. */
export function startEcho(): Promise<Child<{ address: string }>> {
  return startChild<{ address: string }>(childScript("echo-server.ts"), {}, { server: true });
}
