import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A server started as a child process through the README's serve command. */
export interface SpawnedServer {
  address: string;
  /** The web port's URL, when the server serves one (`--web-listen`). */
  webUrl?: string;
  dataDir: string;
  child: ChildProcess;
  /** Lines written so far to stdout and stderr. */
  output: string[];
  /** Sends SIGTERM to the process group and waits for the exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<number | null>;
}

/** Makes a fresh temporary data directory. */
export function tempDir(prefix = "parkway-test-"): Promise<string> {
  return mkdtemp(path.join(tmpdir(), prefix));
}

/** Runs `npm start -- ARGS` in the repository root and collects its output until it exits. */
export function runServe(
  args: string[],
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["start", "--silent", "--", ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...options.env },
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      killGroup(child, "SIGKILL");
      reject(
        new Error(
          `serve did not exit within ${options.timeoutMs ?? 30_000} ms:\n${stdout}${stderr}`,
        ),
      );
    }, options.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Starts the server with the README's serve command (`npm start`) on a free loopback port and waits
 * for its "listening" log line.
 */
export async function spawnServer(
  options: {
    dataDir?: string;
    args?: string[];
    env?: NodeJS.ProcessEnv;
    /**
     * Runs what `npm start` runs (`node bin/parkway.js serve`) without npm, so the exit code is
     * the server's own (npm exits at once on SIGTERM, before the server has shut down).
     */
    direct?: boolean;
    /**
     * Another serve command, e.g. `npx parkway serve` in a project that installed the package; the
     * listen and data arguments follow `args`.
     */
    command?: { file: string; args: string[]; cwd: string };
  } = {},
): Promise<SpawnedServer> {
  const dataDir = options.dataDir ?? (await tempDir());
  const command = options.command ?? {
    file: options.direct ? process.execPath : "npm",
    args: options.direct ? ["bin/parkway.js", "serve"] : ["start", "--silent", "--"],
    cwd: REPO_ROOT,
  };
  const child = spawn(
    command.file,
    [...command.args, "--listen", "127.0.0.1:0", "--data", dataDir, ...(options.args ?? [])],
    { cwd: command.cwd, env: { ...process.env, ...options.env }, detached: true },
  );
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  createInterface({ input: child.stderr }).on("line", (line) => output.push(line));
  const listening = await new Promise<{ address: string; webUrl?: string }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not start:\n${output.join("\n")}`)),
      60_000,
    );
    createInterface({ input: child.stdout }).on("line", (line) => {
      output.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; address?: string; webUrl?: string };
        if (entry.msg === "listening" && entry.address) {
          clearTimeout(timer);
          resolve({ address: entry.address, ...(entry.webUrl ? { webUrl: entry.webUrl } : {}) });
        }
      } catch {
        // not a log line
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output.join("\n")}`));
    });
  });
  return {
    ...listening,
    dataDir,
    child,
    output,
    async stop(graceMs = 10_000) {
      killGroup(child, "SIGTERM");
      const timer = setTimeout(() => killGroup(child, "SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
