import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bashEnvironment } from "../../../src/config/index.js";
import { bashTool, createBashTool } from "../../../src/tools/index.js";
import { sandbox, toolContext } from "./tool-context.js";

let box: Awaited<ReturnType<typeof sandbox>>;
beforeEach(async () => {
  box = await sandbox();
});
afterEach(async () => {
  await box.cleanup();
});

/** Processes of group `pgid` that are still running (zombies waiting to be reaped do not count). */
function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z") out.push(Number(name));
  }
  return out;
}

async function readPid(file: string): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const text = await readFile(file, "utf8").catch(() => "");
    if (text.trim() !== "") return Number(text.trim());
    await sleep(10);
  }
  throw new Error(`no pid in ${file}`);
}

describe("Bash's sandbox", () => {
  it("contains a fork bomb: kills its group past the process limit, and nothing survives", async () => {
    // A bounded fan-out bomb: 2^10 shells, each holding a sleep, far more than the limit allows.
    const pidFile = path.join(box.work, "pgid");
    const bomb =
      `echo $$ > ${pidFile}; ` +
      "f() { if [ $1 -gt 0 ]; then f $(($1-1)) & f $(($1-1)) & fi; sleep 60; }; f 9";
    const ctx = toolContext([box.work]);
    const result = await createBashTool({ maxProcesses: 50 }).run(
      { command: bomb, timeout: 60_000 },
      ctx,
    );
    expect(result.state).toBe("error");
    expect(result.output).toMatch(/killed: more than 50 processes at once \(fork bomb\?\)$/);
    expect(result.metadata).toMatchObject({ tooManyProcesses: true });
    expect(result.metadata).not.toHaveProperty("timedOut");
    const pgid = await readPid(pidFile);
    expect(groupMembers(pgid)).toEqual([]);
  });

  it("kills a sleep past its timeout, children included", async () => {
    const pidFile = path.join(box.work, "pgid");
    const result = await bashTool.run(
      { command: `echo $$ > ${pidFile}; sleep 60 & sleep 60; echo never`, timeout: 500 },
      toolContext([box.work]),
    );
    expect(result).toMatchObject({
      state: "error",
      output: "timed out after 500 ms",
      metadata: { timedOut: true },
    });
    expect(groupMembers(await readPid(pidFile))).toEqual([]);
  });

  it("cuts `yes` at the output cap and kills it as a flood well before its timeout", async () => {
    const ctx = toolContext([box.work], { maxOutputBytes: 1000 });
    const result = await createBashTool({ floodBytes: 8 * 1024 * 1024 }).run(
      { command: "yes", timeout: 10_000 },
      ctx,
    );
    expect(result.state).toBe("error");
    expect(result.output).toBe(
      `${"y\n".repeat(500)}\n[output truncated at 1000 bytes]\n` +
        `killed: output flood (more than ${8 * 1024 * 1024} bytes written)`,
    );
    expect(result.metadata).toMatchObject({ truncated: true, flooded: true });
    expect(result.metadata).not.toHaveProperty("timedOut");
    expect(ctx.emitted.join("")).toBe(result.output);
  });

  it("gives commands a clean environment, never the server's", async () => {
    process.env.PARKWAY_TEST_SECRET = "sk-do-not-leak";
    try {
      const result = await bashTool.run({ command: "env | sort" }, toolContext([box.work]));
      expect(result.state).toBe("success");
      expect(result.output).not.toContain("sk-do-not-leak");
      const names = result.output
        .trim()
        .split("\n")
        .map((line) => line.slice(0, line.indexOf("=")));
      // bash itself adds PWD, SHLVL and _.
      expect(names.filter((n) => !["PWD", "SHLVL", "_", "OLDPWD"].includes(n)).sort()).toEqual([
        "HOME",
        "LANG",
        "PATH",
        "TERM",
      ]);
      expect(result.output).toContain("TERM=dumb\n");
    } finally {
      delete process.env.PARKWAY_TEST_SECRET;
    }
  });

  it("passes named variables through and sets configured values", async () => {
    const server = {
      PATH: "/usr/bin:/bin",
      HOME: "/home/srv",
      USER: "srv",
      OPENAI_API_KEY: "sk-secret",
      GOPATH: "/go",
      TMPDIR: "/var/tmp",
    };
    const env = bashEnvironment(
      { passEnv: ["GOPATH", "MISSING"], env: { NODE_ENV: "test", LANG: "de_DE.UTF-8" } },
      server,
    );
    expect(env).toEqual({
      PATH: "/usr/bin:/bin",
      HOME: "/home/srv",
      USER: "srv",
      LOGNAME: "srv",
      SHELL: "/bin/bash",
      LANG: "de_DE.UTF-8",
      TERM: "dumb",
      PAGER: "cat",
      GIT_PAGER: "cat",
      TMPDIR: "/var/tmp",
      GOPATH: "/go",
      NODE_ENV: "test",
    });
    const result = await createBashTool({ env }).run(
      { command: 'echo "$GOPATH $NODE_ENV ${OPENAI_API_KEY:-unset}"' },
      toolContext([box.work]),
    );
    expect(result.output).toBe("/go test unset\n");
  });
});
