import { writeFile } from "node:fs/promises";
import path from "node:path";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import type { ScriptedModelServer } from "../../src/model/scripted/index.js";
import { type NodeProcess, prepareAgent, startNodeProcess } from "./process-harness.js";

/** Several Parkway nodes, each in a process of its own, on one PostgreSQL database. */
export interface ClusterHarness {
  model: ScriptedModelServer;
  /** One client per node, in the nodes' order. */
  clients: ParkwayClient[];
  nodes: NodeProcess[];
  /** The agent's working directory, shared by the nodes. */
  workdir: string;
  /** Every node stops gracefully and starts again (same address, same node id). */
  restart(): Promise<void>;
  /** Every node's process group is killed with SIGKILL and started again likewise. */
  crash(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts `nodes` Parkway nodes (default 3) with one config: one agent "test" on a scripted model,
 * `agent` made from its working directory, and `database: { url, leaseTimeout, nodeId: "node-<i>" }`.
 * Clients re-attach by themselves across a restart, since every node keeps its address and id.
 */
export async function startClusterHarness(
  agent: (workdir: string) => Record<string, unknown>,
  options: { url: string; nodes?: number; leaseTimeout?: string },
): Promise<ClusterHarness> {
  const { root, workdir, model, settings } = await prepareAgent("parkway-cluster-", agent);
  const database = { url: options.url, leaseTimeout: options.leaseTimeout ?? "1s" };
  const starting = Array.from({ length: options.nodes ?? 3 }, async (_, i) => {
    const nodeId = `node-${i}`;
    const config = path.join(root, `${nodeId}.json`);
    await writeFile(config, JSON.stringify({ ...settings, database: { ...database, nodeId } }));
    // Together: the nodes create or migrate the tables one at a time, under an advisory lock.
    return startNodeProcess(config, path.join(root, nodeId));
  });
  const started = await Promise.allSettled(starting);
  const nodes = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const failed = started.find((s) => s.status === "rejected");
  if (failed) {
    await Promise.all(nodes.map((n) => n.stop()));
    await model.close();
    throw failed.reason;
  }
  const clients = nodes.map((n) => createParkwayClient(n.address));
  return {
    model,
    clients,
    nodes,
    workdir,
    async restart() {
      await Promise.all(nodes.map((n) => n.restart()));
    },
    async crash() {
      await Promise.all(nodes.map((n) => n.crash()));
    },
    async close() {
      for (const c of clients) c.close();
      await Promise.all(nodes.map((n) => n.stop()));
      await model.close();
    },
  };
}
