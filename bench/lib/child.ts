import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { writeHeapSnapshot } from "node:v8";
import { pinServerSide } from "./cores.js";

/** A server or probe running in its own Node process, driven over IPC (see `serveIpc`). */
export interface Child<Ready> {
  readonly pid: number;
  /** What the child sent once ready. */
  readonly ready: Ready;
  /** Sends a command and resolves with the child's answer. */
  call<T = unknown>(cmd: string, arg?: unknown): Promise<T>;
  /** Asks the child to close (so a CPU profile is written), then waits for the exit. */
  close(): Promise<void>;
}

export interface ChildOptions {
  /** Write V8 CPU profiles of the child (one per thread) into this directory. */
  cpuProfDir?: string;
  /** Environment variables set (or, when undefined, removed) in the child on top of this process's. */
  env?: Record<string, string | undefined>;
  /** A server under test: runs on the server side's cores (see `CoreSplit`). */
  server?: boolean;
}

/** The path of a script next to `bench/servers/`. */
export function benchScript(name: string): string {
  return fileURLToPath(new URL(`../servers/${name}`, import.meta.url));
}

/**
 * Forks `script` (TypeScript, through tsx) with `--expose-gc`, passes `arg` as JSON in argv, and
 * waits for its `{ type: "ready" }` message.
 */
export async function startChild<Ready>(
  script: string,
  arg: unknown,
  options: ChildOptions = {},
): Promise<Child<Ready>> {
  // --no-memory-reducer: V8 would otherwise shrink an idle heap at times of its choosing, and
  // memory read before and after a step would differ by that, not by the step.
  const execArgv = ["--import", "tsx", "--expose-gc", "--no-memory-reducer"];
  if (options.cpuProfDir) execArgv.push("--cpu-prof", `--cpu-prof-dir=${options.cpuProfDir}`);
  const child: ChildProcess = fork(script, [JSON.stringify(arg)], {
    execArgv,
    env: { ...process.env, ...options.env, [SETTLE_ENV]: String(settleSeconds) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  if (options.server) pinServerSide(child.pid!);
  const exited = once(child, "exit");
  let nextId = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let onReady: ((ready: Ready) => void) | undefined;
  child.on("message", (raw) => {
    const msg = raw as { type: string; id?: number; result?: unknown; error?: string };
    if (msg.type === "ready") onReady?.(msg.result as Ready);
    if (msg.type === "result" && msg.id !== undefined) {
      const w = waiting.get(msg.id);
      waiting.delete(msg.id);
      if (msg.error !== undefined) w?.reject(new Error(`${script}: ${msg.error}`));
      else w?.resolve(msg.result);
    }
  });
  void exited.then(([code]) => {
    for (const w of waiting.values()) w.reject(new Error(`${script} exited with ${String(code)}`));
    waiting.clear();
  });
  const ready = await Promise.race([
    new Promise<Ready>((resolve) => (onReady = resolve)),
    exited.then(([code]) => {
      throw new Error(`${script} exited with ${String(code)} before it was ready`);
    }),
  ]);
  return {
    pid: child.pid!,
    ready,
    call<T>(cmd: string, arg?: unknown): Promise<T> {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ type: "call", id, cmd, arg });
      });
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send({ type: "call", id: -1, cmd: "close" });
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Memory of a process after full garbage collections, in bytes. */
export interface Memory {
  rss: number;
  /** Anonymous (private) resident memory: RssAnon of /proc/self/status (NaN elsewhere). */
  rssAnon: number;
  /** File-backed resident pages, e.g. LevelDB's memory-mapped tables: RssFile. */
  rssFile: number;
  heapUsed: number;
  external: number;
}

/** A field of /proc/self/status in bytes (NaN where there is none). */
function procStatus(text: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text);
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

/** A command a child answers (the result is sent back over IPC). */
type Handler = (arg: unknown) => unknown;

/** In a child: runs the IPC loop. `handlers.close` is called last, then the process exits. */
export function serveIpc(ready: unknown, handlers: Record<string, Handler>): void {
  const all: Record<string, Handler> = {
    memory: () => measureMemory(),
    /** Writes a heap snapshot (after GC) to the given path. */
    heapSnapshot: async (file) => {
      await measureMemory();
      return writeHeapSnapshot(file as string);
    },
    ...handlers,
  };
  process.on("message", (raw) => {
    const msg = raw as { id: number; cmd: string; arg?: unknown };
    void (async () => {
      try {
        const result = await all[msg.cmd]?.(msg.arg);
        if (msg.cmd === "close") process.exit(0);
        process.send?.({ type: "result", id: msg.id, result });
      } catch (err) {
        if (msg.cmd === "close") process.exit(1);
        process.send?.({ type: "result", id: msg.id, error: String((err as Error).stack ?? err) });
      }
    })();
  });
  process.on("disconnect", () => process.exit(0));
  process.send?.({ type: "ready", result: ready });
}

/**
 * Seconds after start when a child's memory has settled (a one-time drop of 10–30 MB comes
 * before); memory is not read earlier. The smoke run sets 0.
 */
let settleSeconds = 8;
const SETTLE_ENV = "PARKWAY_BENCH_SETTLE_S";

export function setSettleSeconds(seconds: number): void {
  settleSeconds = seconds;
}

/**
 * RSS and heap after full GCs (the child runs with --expose-gc), once the process
 * has settled (see `setSettleSeconds`).
 */
export async function measureMemory(): Promise<Memory> {
  const wait = Number(process.env[SETTLE_ENV] ?? 8) - process.uptime();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait * 1000));
  // Full GCs asking for V8's memory-reducing ("last resort") flavour. Node 20's V8 does not know
  // that flavour and runs a plain full GC, which gives back the young generation (up to ~30 MB)
  // only once the process has allocated next to nothing for ~5 s: a reading that must not depend
  // on it settles first (see bench/suites/parked-scale.ts).
  const gc = (globalThis as { gc?: (options?: object) => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.({ type: "major", execution: "sync", flavor: "last-resort" });
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const m = process.memoryUsage();
  const status = await readFile("/proc/self/status", "utf8").catch(() => "");
  return {
    rss: m.rss,
    rssAnon: procStatus(status, "RssAnon"),
    rssFile: procStatus(status, "RssFile"),
    heapUsed: m.heapUsed,
    external: m.external,
  };
}
