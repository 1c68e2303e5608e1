import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { startScriptedModel, type ScriptedModelServer } from "../../src/model/scripted/index.js";
import { type SpawnedServer, spawnServer, tempDir } from "./spawn-server.js";

/** Parkway in a process of its own (the compiled server), its scripted model, and a client. */
export interface ProcessHarness {
  model: ScriptedModelServer;
  client: ParkwayClient;
  /** The agent's working directory. */
  workdir: string;
  /** Stops the server gracefully and starts it again on the same address and data. */
  restart(): Promise<void>;
  /** Kills the server's process group with SIGKILL (a crash) and starts it again likewise. */
  crash(): Promise<void>;
  close(): Promise<void>;
}

/** One server process started with a config file, which restarts on the same address and data. */
export interface NodeProcess {
  readonly server: SpawnedServer;
  readonly address: string;
  /** Stops the server gracefully and starts it again. */
  restart(): Promise<void>;
  /** Kills the server's process group with SIGKILL (a crash) and starts it again. */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `node bin/parkway.js serve --config CONFIG` on a free port with `dataDir`. */
export async function startNodeProcess(config: string, dataDir: string): Promise<NodeProcess> {
  const launch = (address?: string) =>
    spawnServer({
      dataDir,
      direct: true,
      args: ["--config", config, ...(address ? ["--listen", address] : [])],
    });
  let server = await launch();
  const address = server.address;
  const again = async (stop: () => Promise<unknown>) => {
    await stop();
    server = await launch(address);
  };
  return {
    get server() {
      return server;
    },
    address,
    restart: () => again(() => server.stop()),
    crash: () =>
      again(async () => {
        const exited = new Promise((resolve) => server.child.once("exit", resolve));
        process.kill(-server.child.pid!, "SIGKILL");
        await exited;
      }),
    async stop() {
      await server.stop();
    },
  };
}

/**
 * A temporary root with the agent's working directory (`work`, made first so that `agent` may name
 * it), a scripted model, and a config file for one agent "test" on that model.
 */
export async function prepareAgent(
  prefix: string,
  agent: (workdir: string) => Record<string, unknown>,
): Promise<{
  root: string;
  workdir: string;
  model: ScriptedModelServer;
  /** The config file, and what it holds. */
  config: string;
  settings: Record<string, unknown>;
}> {
  const root = await tempDir(prefix);
  const workdir = path.join(root, "work");
  await mkdir(workdir, { recursive: true });
  const model = await startScriptedModel({ script: { turns: [] } });
  const config = path.join(root, "parkway.json");
  const settings = {
    model: { url: model.url, name: "scripted", maxRetries: 2 },
    agents: [{ id: "test", workingDirectories: [workdir], ...agent(workdir) }],
  };
  await writeFile(config, JSON.stringify(settings));
  return { root, workdir, model, config, settings };
}

/**
 * Like `startHarness`, with Parkway started by its serve command in a process of its own, so that
 * a test can kill it: one agent "test" on the scripted model; `agent` is made from the working
 * directory (created first). A restart keeps the address, so the client's sessions re-attach.
 */
export async function startProcessHarness(
  agent: (workdir: string) => Record<string, unknown>,
): Promise<ProcessHarness> {
  const { root, workdir, model, config } = await prepareAgent("parkway-proc-", agent);
  const node = await startNodeProcess(config, path.join(root, "data"));
  const client = createParkwayClient(node.address);
  return {
    model,
    client,
    workdir,
    restart: () => node.restart(),
    crash: () => node.crash(),
    async close() {
      client.close();
      await node.stop();
      await model.close();
    },
  };
}
