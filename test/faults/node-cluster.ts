import { writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { type SpawnedServer, spawnServer } from "../helpers/spawn-server.js";

/** One life of a node: from its start to its exit. */
export interface NodeLife {
  /** `node-<i>.<life>`: the node's name and the life's number, as its tools and model calls say. */
  readonly name: string;
  readonly node: number;
  readonly pid: number;
  readonly startedAt: number;
  /** When the harness saw the process exit. */
  endedAt?: number;
  /** How it ended: "SIGKILL" (the harness killed it), or its exit code. */
  exit?: string;
}

/** What the cluster reports. */
export interface ClusterCounts {
  /** Starts that failed (the database was down, the node exited before listening). */
  failedStarts: number;
  /** Exits the harness did not cause, by exit code. */
  exits: Record<string, number>;
  /** The last lines a node logged before the first such exit of each code. */
  exitLogs: Record<string, string[]>;
  /** The first line of each error a node logged (level error or fatal), by its message. */
  errors: Record<string, string>;
}

/**
 * Nodes of one Parkway cluster, each the compiled server in a process of its own on an address of
 * its own. A node that exits for any reason (killed by the harness, or stopped on its own: a failed
 * write stops the store, and the server exits with 75) is started again on its address under its
 * name, once it can start (a node cannot while the database is down). `config(node, life)` is the
 * node's config for one life, written to its own file before each start. Every life is recorded.
 */
export class NodeCluster {
  readonly lives: NodeLife[] = [];
  readonly counts: ClusterCounts = { failedStarts: 0, exits: {}, exitLogs: {}, errors: {} };
  private readonly servers: (SpawnedServer | undefined)[];
  private readonly addresses: (string | undefined)[];
  private readonly clientsOf: (ParkwayClient | undefined)[];
  private readonly starting: (Promise<void> | undefined)[];
  private stopping = false;

  constructor(
    private readonly root: string,
    readonly size: number,
    private readonly config: (node: number, life: string) => Record<string, unknown>,
    /** Told of every unexpected line a node logs ("uncaught", "unhandled"). */
    private readonly onBadLog: (life: string, line: string) => void,
  ) {
    this.servers = Array.from({ length: size }, () => undefined);
    this.addresses = Array.from({ length: size }, () => undefined);
    this.clientsOf = Array.from({ length: size }, () => undefined);
    this.starting = Array.from({ length: size }, () => undefined);
  }

  /** Starts every node and waits until each listens. */
  async start(): Promise<void> {
    await Promise.all(Array.from({ length: this.size }, (_, i) => this.launch(i)));
  }

  /** The node's client (one per node: it reconnects to the restarted node on the same address). */
  client(node: number): ParkwayClient {
    const client = this.clientsOf[node];
    if (!client) throw new Error(`node ${node} never started`);
    return client;
  }

  /** A random node's client. */
  anyClient(): ParkwayClient {
    return this.client(Math.floor(Math.random() * this.size));
  }

  /** Whether the node is up (listening, not being started). */
  isUp(node: number): boolean {
    return this.servers[node] !== undefined && this.starting[node] === undefined;
  }

  /** SIGKILLs the node's process group; resolves once it exited (the cluster starts it again). */
  async kill(node: number): Promise<boolean> {
    const server = this.servers[node];
    if (!server || server.child.exitCode !== null || server.child.signalCode !== null) return false;
    const exited = new Promise((resolve) => server.child.once("exit", resolve));
    process.kill(-server.child.pid!, "SIGKILL");
    await exited;
    return true;
  }

  /** Waits until every node that is being started is up (or gave up, when stopping). */
  async settled(): Promise<void> {
    while (this.starting.some((s) => s !== undefined)) {
      await Promise.all(this.starting.map((s) => s ?? Promise.resolve()));
    }
  }

  /** Stops every node (SIGTERM) and closes the clients. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.starting.map((s) => s ?? Promise.resolve()));
    await Promise.all(this.servers.map((s) => s?.stop() ?? Promise.resolve()));
    for (const life of this.lives.filter((l) => l.endedAt === undefined)) {
      this.readLog(life, this.servers[life.node]?.output ?? []);
    }
    for (const c of this.clientsOf) c?.close();
  }

  /** Notes the errors a life logged, and what it should never log. */
  private readLog(life: NodeLife, output: readonly string[]): void {
    for (const line of output) {
      if (/uncaught|unhandled/i.test(line)) this.onBadLog(life.name, line);
      let entry: { level?: number; msg?: string } | undefined;
      try {
        entry = JSON.parse(line) as { level?: number; msg?: string };
      } catch {
        continue;
      }
      if ((entry.level ?? 0) >= 50) this.counts.errors[entry.msg ?? "?"] ??= line.slice(0, 800);
    }
  }

  /** Starts the node (again), retrying until it listens; at most one start of a node at a time. */
  private launch(node: number): Promise<void> {
    this.starting[node] ??= this.launchUntilUp(node).finally(() => {
      this.starting[node] = undefined;
    });
    return this.starting[node];
  }

  private async launchUntilUp(node: number): Promise<void> {
    for (let attempt = 0; !this.stopping; attempt++) {
      const life = `node-${node}.${this.lives.filter((l) => l.node === node).length + 1}`;
      const file = path.join(this.root, `node-${node}.json`);
      await writeFile(file, JSON.stringify(this.config(node, life)));
      const address = this.addresses[node];
      let server: SpawnedServer;
      try {
        server = await spawnServer({
          dataDir: path.join(this.root, `unused-${node}`),
          direct: true,
          args: ["--config", file, ...(address ? ["--listen", address] : [])],
        });
      } catch {
        // It could not start (the database is down) and exited: try again shortly.
        this.counts.failedStarts++;
        await sleep(Math.min(1000, 100 * (attempt + 1)));
        continue;
      }
      const record: NodeLife = { name: life, node, pid: server.child.pid!, startedAt: Date.now() };
      this.lives.push(record);
      this.servers[node] = server;
      this.addresses[node] ??= server.address;
      this.clientsOf[node] ??= createParkwayClient(server.address, { timeoutMs: 10_000 });
      server.child.once("exit", (code, signal) => this.exited(node, server, record, code, signal));
      return;
    }
  }

  private exited(
    node: number,
    server: SpawnedServer,
    life: NodeLife,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): void {
    life.endedAt = Date.now();
    life.exit = signal ?? String(code);
    if (signal !== "SIGKILL" && !this.stopping) {
      this.counts.exits[life.exit] = (this.counts.exits[life.exit] ?? 0) + 1;
      this.counts.exitLogs[life.exit] ??= server.output.slice(-6).map((l) => l.slice(0, 300));
    }
    this.readLog(life, server.output);
    const keep = process.env.PARKWAY_FAULTS_LOGS;
    if (keep && signal !== "SIGKILL") {
      void writeFile(path.join(keep, `${life.name}.log`), server.output.join("\n")).catch(
        () => undefined,
      );
    }
    if (this.servers[node] === server) this.servers[node] = undefined;
    // A start that fails for good (the test's files removed under it) leaves the node down.
    if (!this.stopping) this.launch(node).catch(() => undefined);
  }
}
