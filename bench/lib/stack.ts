import { mkdir, mkdtemp } from "node:fs/promises";
import path from "node:path";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { type ScriptedModelServer, startScriptedModel } from "../../src/model/scripted/index.js";
import { type Child, benchScript as childScript, startChild } from "./child.js";
import type { BenchConfig } from "./config.js";
import { benchScript } from "./model.js";
import { startTimingProxy, type TimingProxy } from "./timing-proxy.js";

/** What the Parkway child reports once SERVING. */
export interface ParkwayReady {
  address: string;
  /** Microseconds `startParkway` took. */
  startUs: number;
}

/** The scripted model (in this process), Parkway (a child process) and a client. */
export interface Stack {
  model: ScriptedModelServer;
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

/**
 * Starts the scripted model, optionally the timing proxy in front of it, and Parkway in a child
 * process on `dataDir` (a fresh one by default). `profile` names the CPU profile when the run
 * profiles.
 */
export async function startStack(
  config: BenchConfig,
  options: { dataDir?: string; proxy?: boolean; profile?: string } = {},
): Promise<Stack> {
  const model = await startScriptedModel({ script: benchScript(config.streamDeltas) });
  const proxy = options.proxy ? await startTimingProxy(model.url) : undefined;
  const dataDir = options.dataDir ?? path.join(await scratchDir(config, "parkway"), "data");
  const parkway = await startChild<ParkwayReady>(
    process.env.PK_SCRIPT ?? childScript("parkway-server.ts"),
    { data: dataDir, modelUrl: proxy?.url ?? model.url },
    config.profileDir && options.profile
      ? { cpuProfDir: path.join(config.profileDir, options.profile) }
      : {},
  );
  const client = createParkwayClient(parkway.ready.address);
  return {
    model,
    ...(proxy ? { proxy } : {}),
    parkway,
    client,
    dataDir,
    async close() {
      client.close();
      await parkway.close();
      await proxy?.close();
      await model.close();
    },
  };
}

/** The bare echo server in a child process. */
export function startEcho(): Promise<Child<{ address: string }>> {
  return startChild<{ address: string }>(childScript("echo-server.ts"), {});
}
