import { execFileSync } from "node:child_process";
import { availableParallelism } from "node:os";

/**
 * How a run places the two sides of every row on the machine's cores: the load (this process with
 * its clients and the scripted model, and the Go and Python clients it spawns, which inherit its
 * affinity) on the last half of the cores, and the server under test (Parkway, or the baseline
 * server it is compared with) on any core. Without it the scripted model and the clients take
 * turns on every core, and a server that does more per message (Parkway) loses more to them than
 * the echo does. The server is not confined to the other half: its main thread would then share one
 * core with its own helper threads (libuv's pool runs LevelDB's writes, V8 collects garbage in
 * parallel), and every write it hands over would wait for the helper to yield the core. Off with
 * `PARKWAY_BENCH_CORES=shared`, or where `taskset` or a second core is missing.
 */
export interface CoreSplit {
  /** `taskset` list of the server side's cores: all of them, e.g. "0-1". */
  server: string;
  /** `taskset` list of the load side's cores, e.g. "1". */
  load: string;
}

function decide(): CoreSplit | undefined {
  const cores = availableParallelism();
  if (cores < 2 || process.env.PARKWAY_BENCH_CORES === "shared") return undefined;
  try {
    execFileSync("taskset", ["-V"], { stdio: "ignore" });
  } catch {
    return undefined;
  }
  const half = Math.ceil(cores / 2);
  const list = (from: number, to: number) => (from === to ? `${from}` : `${from}-${to}`);
  return { server: list(0, cores - 1), load: list(half, cores - 1) };
}

let split: CoreSplit | undefined | null = null;

/** The split of this run (decided once), or undefined when the cores are shared. */
export function coreSplit(): CoreSplit | undefined {
  if (split === null) split = decide();
  return split;
}

/** Pins every thread of `pid` to `cores`. */
function pin(pid: number, cores: string): void {
  execFileSync("taskset", ["-a", "-p", "-c", cores, String(pid)], { stdio: "ignore" });
}

/** Moves this process (and so every process it starts later) to the load side. */
export function pinLoadSide(): void {
  const s = coreSplit();
  if (s) pin(process.pid, s.load);
}

/** Moves a server under test (Parkway or a baseline server) to the server side. */
export function pinServerSide(pid: number): void {
  const s = coreSplit();
  if (s) pin(pid, s.server);
}

/**
 * Moves a server process and the processes it has started (PostgreSQL's postmaster and its
 * workers; the backends it forks later inherit the postmaster's affinity) to the server side.
 */
export function pinServerTree(pid: number): void {
  if (!coreSplit()) return;
  pinServerSide(pid);
  let children = "";
  try {
    children = execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" });
  } catch {
    // no children
  }
  for (const child of children.split("\n").filter(Boolean)) pinServerTree(Number(child));
}

/** The split in words, for the results. */
export function describeCores(): string {
  const s = coreSplit();
  return s
    ? `clients and the scripted model on core ${s.load}; servers under test on any of cores ${s.server}`
    : "cores shared by servers, clients and the scripted model";
}
