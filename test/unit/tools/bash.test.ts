import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bashTool, createBashTool } from "../../../src/tools/index.js";
import { sandbox, toolContext } from "./tool-context.js";

let box: Awaited<ReturnType<typeof sandbox>>;
beforeEach(async () => {
  box = await sandbox();
});
afterEach(async () => {
  await box.cleanup();
});

/** True while `pid` is a live process (a zombie waiting to be reaped counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

async function waitFor(check: () => boolean | Promise<boolean>, tries = 500): Promise<void> {
  for (let i = 0; i < tries && !(await check()); i++) await sleep(10);
}

async function readPid(file: string): Promise<number> {
  let text = "";
  await waitFor(async () => {
    text = await readFile(file, "utf8").catch(() => "");
    return text.trim() !== "";
  });
  return Number(text.trim());
}

describe("Bash", () => {
  it("runs in the first working directory and succeeds on exit 0", async () => {
    const ctx = toolContext([box.work, box.outside]);
    const result = await bashTool.run({ command: "pwd; echo err >&2" }, ctx);
    expect(result.state).toBe("success");
    expect(result.output).toBe(`${box.work}\nerr\n`);
    expect(result.metadata).toEqual({ exitCode: 0 });
    expect(ctx.emitted.join("")).toBe(result.output);
  });

  it("streams output as it is produced, in several deltas", async () => {
    const ctx = toolContext([box.work]);
    const result = await bashTool.run(
      { command: "for i in 1 2 3; do echo line$i; sleep 0.2; done" },
      ctx,
    );
    expect(result.output).toBe("line1\nline2\nline3\n");
    expect(ctx.emitted.length).toBeGreaterThanOrEqual(3);
    expect(ctx.emitted.join("")).toBe(result.output);
  });

  it("reports a non-zero exit as an error with the exit code", async () => {
    const ctx = toolContext([box.work]);
    const result = await bashTool.run({ command: "echo partial; exit 3" }, ctx);
    expect(result.state).toBe("error");
    expect(result.output).toBe("partial\nexit code 3");
    expect(result.metadata).toEqual({ exitCode: 3 });
    expect(ctx.emitted.join("")).toBe(result.output);
  });

  it("kills the command and its children on timeout", async () => {
    const pidFile = path.join(box.work, "pid");
    const ctx = toolContext([box.work]);
    const result = await bashTool.run(
      { command: `sleep 30 & echo $! > ${pidFile}; echo started; wait`, timeout: 300 },
      ctx,
    );
    expect(result.state).toBe("error");
    expect(result.output).toBe("started\ntimed out after 300 ms");
    expect(result.metadata).toMatchObject({ timedOut: true, exitCode: null });
    const pid = await readPid(pidFile);
    await waitFor(() => !alive(pid));
    expect(alive(pid)).toBe(false);
  });

  it("kills the whole process group, background child included, on abort", async () => {
    const pidFile = path.join(box.work, "pid");
    const ctx = toolContext([box.work]);
    const running = bashTool.run({ command: `sleep 30 & echo $! > ${pidFile}; wait` }, ctx);
    const pid = await readPid(pidFile);
    expect(alive(pid)).toBe(true);
    ctx.controller.abort();
    const result = await running;
    expect(result.state).toBe("error");
    expect(result.output).toBe("interrupted");
    expect(result.metadata).toMatchObject({ interrupted: true });
    await waitFor(() => !alive(pid));
    expect(alive(pid)).toBe(false);
  });

  it("escalates to SIGKILL when the command ignores SIGTERM", async () => {
    const ctx = toolContext([box.work]);
    const pidFile = path.join(box.work, "pid");
    const running = createBashTool({ killGraceMs: 200 }).run(
      { command: `trap '' TERM; echo $$ > ${pidFile}; while :; do sleep 0.05; done` },
      ctx,
    );
    const pid = await readPid(pidFile);
    ctx.controller.abort();
    const result = await running;
    expect(result.output).toBe("interrupted");
    expect(alive(pid)).toBe(false);
  });

  it("does not start when the signal is already aborted", async () => {
    const ctx = toolContext([box.work]);
    ctx.controller.abort();
    const result = await bashTool.run({ command: `touch ${box.work}/ran` }, ctx);
    expect(result.output).toBe("interrupted");
    await expect(readFile(path.join(box.work, "ran"))).rejects.toThrow();
  });

  it("leaves no background process behind after a normal exit", async () => {
    const pidFile = path.join(box.work, "pid");
    const ctx = toolContext([box.work]);
    const result = await bashTool.run(
      { command: `sleep 30 > /dev/null 2>&1 & echo $! > ${pidFile}; echo done` },
      ctx,
    );
    expect(result).toMatchObject({ state: "success", output: "done\n" });
    const pid = await readPid(pidFile);
    await waitFor(() => !alive(pid));
    expect(alive(pid)).toBe(false);
  });

  it("caps a flood of output, keeps the command running to its end, and says so", async () => {
    const ctx = toolContext([box.work], { maxOutputBytes: 1000 });
    const result = await bashTool.run(
      { command: "yes | head -c 10000000; echo finished >&2" },
      ctx,
    );
    expect(result.state).toBe("success");
    expect(result.output).toBe(`${"y\n".repeat(500)}\n[output truncated at 1000 bytes]`);
    expect(result.metadata).toEqual({ exitCode: 0, truncated: true });
    expect(ctx.emitted.join("")).toBe(result.output);
  });

  it("cuts multi-byte output on a character boundary", async () => {
    const ctx = toolContext([box.work], { maxOutputBytes: 5 });
    const result = await bashTool.run({ command: "printf 'ééé'" }, ctx);
    expect(result.output).toBe("éé\n[output truncated at 5 bytes]");
  });

  it("reports a command killed by a signal", async () => {
    const ctx = toolContext([box.work]);
    const result = await bashTool.run({ command: "kill -SEGV $$" }, ctx);
    expect(result.state).toBe("error");
    expect(result.output).toBe("killed by signal SIGSEGV");
    expect(result.metadata).toEqual({ exitCode: null, signal: "SIGSEGV" });
  });

  it("dies with the process that runs it, even SIGKILLed: its whole group goes too", async () => {
    // A process of its own runs the tool (the build: test/setup/build.ts keeps it current), starts
    // a command that never ends, and is SIGKILLed as soon as the command runs.
    const pids = path.join(box.work, "pids");
    const script = [
      `import { bashTool } from ${JSON.stringify(path.resolve("dist/tools/index.js"))};`,
      "await bashTool.run(",
      `  { command: "sleep 60 & echo $$ $! > ${pids}; wait" },`,
      "  { signal: new AbortController().signal, workingDirectories: [process.cwd()],",
      "    emitText: () => undefined, maxOutputBytes: 1000 },",
      ");",
    ].join("\n");
    const host = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd: box.work,
      stdio: "ignore",
    });
    let running: number[] = [];
    // A loaded machine may take a while to start a process (at most 30 s here).
    await waitFor(async () => {
      running = (await readFile(pids, "utf8").catch(() => "")).trim().split(" ").map(Number);
      return running.length === 2 && running.every((pid) => pid > 0);
    }, 3000);
    expect(running.every(alive), "the command runs").toBe(true);
    host.kill("SIGKILL");
    await waitFor(() => !running.some(alive), 3000);
    expect(running.filter(alive), "processes left running after the server died").toEqual([]);
  }, 70_000);

  it("is neither read-only nor concurrency-safe", () => {
    expect(bashTool.isReadOnly({ command: "ls" })).toBe(false);
    expect(bashTool.isConcurrencySafe({ command: "ls" })).toBe(false);
  });

  it("validates its input strictly", () => {
    const s = bashTool.inputSchema;
    expect(s.safeParse({ command: "ls", timeout: 1000, description: "list" }).success).toBe(true);
    expect(s.safeParse({ command: "ls", cwd: "/" }).success).toBe(false);
    expect(s.safeParse({}).success).toBe(false);
    expect(s.safeParse({ command: 1 }).success).toBe(false);
    expect(s.safeParse({ command: "ls", timeout: 600_001 }).success).toBe(false);
    expect(s.safeParse({ command: "ls", timeout: 0 }).success).toBe(false);
  });
});
