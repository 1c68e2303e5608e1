import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const GO_DIR = fileURLToPath(new URL("../go", import.meta.url));

/** Builds the Go load generator (bench/go) into `dir`; returns the binary's path. */
export async function buildLoad(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const bin = path.join(dir, "parkway-load");
  await promisify(execFile)("go", ["build", "-o", bin, "."], { cwd: GO_DIR });
  return bin;
}

/** The load generator running: its JSON lines as they come, and its stdin for phase changes. */
export interface LoadProcess {
  /** The next JSON line it prints. */
  next<T>(): Promise<T>;
  /** Ends the current phase (a line on stdin). */
  advance(): void;
  /** Resolves when it exits with 0; rejects with its stderr otherwise. */
  readonly done: Promise<void>;
  kill(): void;
}

/**
 * Starts the load generator with `args` (mode last or first, see bench/go/main.go); any other
 * program speaking the same JSON lines too (`env` on top of this process's).
 */
export function startLoad(bin: string, args: string[], env?: NodeJS.ProcessEnv): LoadProcess {
  const child: ChildProcess = spawn(bin, args, {
    stdio: ["pipe", "pipe", "pipe"],
    ...(env ? { env: { ...process.env, ...env } } : {}),
  });
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  createInterface({ input: child.stdout! }).on("line", (line) => {
    lines.push(line);
    wake?.();
  });
  // "close", not "exit": the process may exit before its last lines are read from the pipe.
  let closed = false;
  const done = new Promise<void>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      closed = true;
      wake?.();
      if (code === 0) resolve();
      else
        reject(new Error(`parkway-load ${args.join(" ")} exited with ${code}: ${stderr.trim()}`));
    });
  });
  done.catch(() => undefined);
  return {
    async next<T>(): Promise<T> {
      for (;;) {
        const line = lines.shift();
        if (line !== undefined) return JSON.parse(line) as T;
        if (closed) {
          await done;
          throw new Error(`parkway-load ${args.join(" ")} exited without output`);
        }
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    advance() {
      child.stdin!.write("next\n");
    },
    done,
    kill() {
      child.kill("SIGKILL");
    },
  };
}

/** Runs the load generator to the end; resolves with its last JSON line. */
export async function runLoad<T>(bin: string, args: string[]): Promise<T> {
  const p = startLoad(bin, args);
  const out = await p.next<T>();
  await p.done;
  return out;
}

/** User + system CPU seconds a process has used so far (Linux /proc; NaN elsewhere). */
export async function cpuSeconds(pid: number): Promise<number> {
  try {
    const { readFile } = await import("node:fs/promises");
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Runs `fn` and returns its result with the CPU cores `pid` used meanwhile. */
export async function withCpu<T>(pid: number, fn: () => Promise<T>): Promise<[T, number]> {
  const c0 = await cpuSeconds(pid);
  const t0 = Date.now();
  const out = await fn();
  const cores = ((await cpuSeconds(pid)) - c0) / ((Date.now() - t0) / 1000);
  return [out, cores];
}
