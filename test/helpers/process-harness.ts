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

/**
 * Like `startHarness`, with Parkway started by its serve command in a process of its own, so that
 * a test can kill it: one agent "test" on the scripted model; `agent` is made from the working
 * directory (created first). A restart keeps the address, so the client's sessions re-attach.
 */
export async function startProcessHarness(
  agent: (workdir: string) => Record<string, unknown>,
): Promise<ProcessHarness> {
  const root = await tempDir("parkway-proc-");
  const workdir = path.join(root, "work");
  await mkdir(workdir, { recursive: true });
  const model = await startScriptedModel({ script: { turns: [] } });
  const config = path.join(root, "parkway.json");
  await writeFile(
    config,
    JSON.stringify({
      model: { url: model.url, name: "scripted", maxRetries: 2 },
      agents: [{ id: "test", workingDirectories: [workdir], ...agent(workdir) }],
    }),
  );
  const dataDir = path.join(root, "data");
  const launch = (address?: string) =>
    spawnServer({
      dataDir,
      direct: true,
      args: ["--config", config, ...(address ? ["--listen", address] : [])],
    });
  let server: SpawnedServer = await launch();
  const client = createParkwayClient(server.address);
  const again = async (stop: () => Promise<unknown>) => {
    const address = server.address;
    await stop();
    server = await launch(address);
  };
  return {
    model,
    client,
    workdir,
    restart: () => again(() => server.stop()),
    crash: () =>
      again(async () => {
        const exited = new Promise((resolve) => server.child.once("exit", resolve));
        process.kill(-server.child.pid!, "SIGKILL");
        await exited;
      }),
    async close() {
      client.close();
      await server.stop();
      await model.close();
    },
  };
}
