import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "./free-port.js";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";

/**
 * A temporary PostgreSQL cluster for one test file: `initdb` into a temporary directory, `postgres`
 * on a free 127.0.0.1 port (its socket in that directory, fsync on), trust authentication for the
 * superuser "postgres". As root (PostgreSQL refuses to run as root) its programs run as the
 * `postgres` system user through `runuser`, which keeps the environment, so the processes carry the
 * test run's markers like any other. Stop it in the file's afterAll. The benchmarks start their
 * cluster with it too (bench/lib/postgres-cluster.ts): it must not import vitest.
 */
export interface TestPostgres {
  readonly port: number;
  /** The cluster's data directory. */
  readonly dataDir: string;
  /** The URL of a database of the cluster (the password is ignored: trust authentication). */
  url(database: string, options?: { password?: string }): string;
  /** Creates a fresh database and resolves with its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Runs SQL as the superuser in `database` (default "postgres"). */
  query<R extends Record<string, unknown> = Record<string, unknown>>(
    sql: string,
    values?: unknown[],
    database?: string,
  ): Promise<R[]>;
  /**
   * Crashes the server: an immediate stop (SIGQUIT to the postmaster, as `pg_ctl stop -m immediate`
   * sends), which ends every connection at once and leaves recovery from the WAL to the next start.
   * Resolves once it exited; `restart` starts it again.
   */
  kill(): Promise<void>;
  /** Starts a killed server again on the same port and data directory (it replays its WAL). */
  restart(): Promise<void>;
  /** Stops the server (fast shutdown: SIGINT) and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

/** The bin directory of the newest PostgreSQL installed, or undefined. */
export function findPostgresBin(): string | undefined {
  const candidates: string[] = [];
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    for (const version of readdirSync(root)) candidates.push(path.join(root, version, "bin"));
  }
  const found = candidates
    .filter((bin) => existsSync(path.join(bin, "initdb")) && existsSync(path.join(bin, "postgres")))
    .sort((a, b) => versionOf(b) - versionOf(a));
  if (found[0]) return found[0];
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, "initdb")) && existsSync(path.join(dir, "postgres"))) {
      return dir;
    }
  }
  return undefined;
}

const versionOf = (bin: string) => Number.parseFloat(path.basename(path.dirname(bin))) || 0;

const asRoot = () => process.getuid?.() === 0;

/** The command that runs `file` as the user PostgreSQL runs as. */
function command(file: string, args: string[]): [string, string[]] {
  return asRoot() ? ["runuser", ["-u", "postgres", "--", file, ...args]] : [file, args];
}

/**
 * Lets the `postgres` user reach `dir`: owns it, and may pass through the directories above it that
 * this process owns (the test file's TMPDIR is 0700).
 */
function handOver(dir: string): void {
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString());
  chownSync(dir, uid, gid);
  for (let up = path.dirname(dir); up !== path.dirname(up); up = path.dirname(up)) {
    const info = statSync(up);
    if ((info.mode & 0o001) !== 0) continue;
    if (info.uid !== process.getuid?.()) {
      throw new Error(`the postgres user cannot enter ${up} (mode ${info.mode.toString(8)})`);
    }
    chmodSync(up, info.mode | 0o011);
  }
}

/** Starts a temporary cluster (see `TestPostgres`); fails clearly when PostgreSQL is missing. */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = findPostgresBin();
  if (!bin) {
    throw new Error(
      "PostgreSQL's server programs (initdb, postgres) were not found in /usr/lib/postgresql/*/bin or on PATH: install them (Debian: apt-get install postgresql) to run the PostgreSQL tests",
    );
  }
  const root = await mkdtemp(path.join(tmpdir(), "pg-"));
  if (asRoot()) handOver(root);
  const dataDir = path.join(root, "data");
  const [initdb, initArgs] = command(path.join(bin, "initdb"), [
    "-D",
    dataDir,
    "-U",
    "postgres",
    "--auth=trust",
    "-E",
    "UTF8",
    "--locale=C",
    "--no-sync",
    "--no-instructions",
  ]);
  try {
    execFileSync(initdb, initArgs, { stdio: "pipe", cwd: root });
  } catch (err) {
    await rm(root, { recursive: true, force: true });
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? String(err);
    throw new Error(`initdb failed: ${stderr}`, { cause: err });
  }
  let server: { child: ChildProcess; port: number; log: string[] } | undefined;
  for (let attempt = 0; attempt < 3 && !server; attempt++) {
    server = await launch(bin, root, dataDir, await freePort()).catch(async (err: unknown) => {
      if (attempt === 2) {
        await rm(root, { recursive: true, force: true });
        throw err;
      }
      return undefined;
    });
  }
  let { child } = server!;
  const { port } = server!;
  const url = (database: string, options: { password?: string } = {}) =>
    `postgres://postgres${options.password ? `:${encodeURIComponent(options.password)}` : ""}@127.0.0.1:${port}/${database}`;
  let databases = 0;
  let stopped: Promise<void> | undefined;
  const query = async <R extends Record<string, unknown>>(
    sql: string,
    values: unknown[] = [],
    database = "postgres",
  ): Promise<R[]> => {
    const client = new pg.Client({ connectionString: url(database) });
    await client.connect();
    try {
      return (await client.query<R>(sql, values)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    port,
    dataDir,
    url,
    query,
    async createDatabase(name = `db_${++databases}`) {
      await query(`CREATE DATABASE "${name}"`);
      return url(name);
    },
    async kill() {
      await stopServer(child, dataDir, "SIGQUIT");
    },
    async restart() {
      if (stopped) throw new Error("the cluster was stopped");
      if (child.exitCode === null && child.signalCode === null) {
        throw new Error("postgres is still running: kill it first");
      }
      child = (await launch(bin, root, dataDir, port)).child;
    },
    stop() {
      stopped ??= (async () => {
        await stopServer(child, dataDir);
        await rm(root, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}

/** Starts `postgres` on `port` and waits until it takes connections. */
async function launch(
  bin: string,
  root: string,
  dataDir: string,
  port: number,
): Promise<{ child: ChildProcess; port: number; log: string[] }> {
  const [file, args] = command(path.join(bin, "postgres"), [
    "-D",
    dataDir,
    "-p",
    String(port),
    "-k",
    root,
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "fsync=on",
    "-c",
    "max_connections=200",
    "-c",
    "shared_buffers=16MB",
  ]);
  const child = spawn(file, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const log: string[] = [];
  child.stdout?.on("data", (d: Buffer) => log.push(d.toString()));
  child.stderr?.on("data", (d: Buffer) => log.push(d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (gone) throw new Error(`postgres exited while starting:\n${log.join("")}`);
    const client = new pg.Client({
      connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await client.query("SELECT 1");
      await client.end();
      return { child, port, log };
    } catch {
      await client.end().catch(() => undefined);
    }
    if (Date.now() > deadline) {
      await stopServer(child, dataDir);
      throw new Error(`postgres did not take connections within 30 s:\n${log.join("")}`);
    }
    await sleep(50);
  }
}

/**
 * Fast shutdown: SIGINT to the postmaster (named by postmaster.pid; `runuser` does not pass SIGINT
 * on), which ends its sessions and its children; SIGKILL to the whole group after 20 s. SIGQUIT
 * instead is an immediate shutdown: no checkpoint, the next start recovers.
 */
async function stopServer(
  child: ChildProcess,
  dataDir: string,
  how: "SIGINT" | "SIGQUIT" = "SIGINT",
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let postmaster = NaN;
  try {
    postmaster = Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    // not written yet, or already removed
  }
  const signal = (pid: number, sig: NodeJS.Signals) => {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  };
  if (Number.isInteger(postmaster) && postmaster > 0) signal(postmaster, how);
  else if (child.pid) signal(-child.pid, how);
  const timer = setTimeout(() => child.pid && signal(-child.pid, "SIGKILL"), 20_000);
  await exited;
  clearTimeout(timer);
}
