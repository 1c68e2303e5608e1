import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { COMMAND_USAGE, type Command } from "../../src/cli/usage.js";
import { REPO_ROOT } from "../helpers/spawn-server.js";

const run = async (args: string[]) => {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ["bin/parkway.js", ...args],
      { cwd: REPO_ROOT, timeout: 30_000 },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
};

describe("parkway <command> --help", () => {
  it.each(["serve", "mock-model", "repair", "chat"])(
    "prints the usage of %s with every flag of its synopsis, and exits 0",
    async (command) => {
      const overview = await run(["--help"]);
      expect(overview.code).toBe(0);
      const synopsis = overview.stdout
        .split("\n\n")[0]!
        .split(/\n(?= {2}parkway )/)
        .find((part) => part.trimStart().startsWith(`parkway ${command} `));
      const flags = new Set(synopsis?.match(/--[a-z-]+/g));
      expect(flags.size).toBeGreaterThan(1);

      for (const help of ["--help", "-h"]) {
        const res = await run([command, help]);
        expect(res.code).toBe(0);
        expect(res.stderr).toBe("");
        expect(res.stdout.startsWith(`usage: parkway ${command}`)).toBe(true);
        for (const flag of flags) expect(res.stdout).toContain(`  ${flag}`);
      }
    },
  );

  it("asks for help after other flags too, without starting anything", async () => {
    const res = await run(["serve", "--listen", "127.0.0.1:0", "--help"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("usage: parkway serve");
    expect(res.stdout).not.toContain("listening");
  });

  it.each([
    ["serve", ["--lisen", "x"], "Unknown option '--lisen'"],
    ["serve", ["--listen"], "--listen"],
    ["serve", ["extra"], "Unexpected argument 'extra'"],
    ["chat", ["--server"], "--server"],
    ["mock-model", ["--keep-requests", "-3"], "--keep-requests must be a whole number"],
    ["mock-model", ["--listen", "127.0.0.1:0"], "mock-model needs --script FILE"],
    ["repair", ["--data"], "--data"],
  ])(
    "refuses the command line %s %j with exit code 2, one line and that command's usage",
    async (command, args, problem) => {
      const res = await run([command, ...args]);
      expect(res.code).toBe(2);
      expect(res.stdout).toBe("");
      const [first, ...usage] = res.stderr.split("\n");
      expect(first).toMatch(/^parkway: /);
      expect(first).toContain(problem);
      expect(usage.join("\n").trim()).toBe(COMMAND_USAGE[command as Command]);
    },
  );

  it("prints the package's version with --version, and exits 0", async () => {
    const res = await run(["--version"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toBe("");
    const { version } = JSON.parse(
      await readFile(path.join(REPO_ROOT, "package.json"), "utf8"),
    ) as { version: string };
    expect(res.stdout).toBe(`${version}\n`);
  });

  it("lists every flag of parkway serve --help in the serve line of parkway --help", async () => {
    const overview = await run(["--help"]);
    const serveHelp = await run(["serve", "--help"]);
    const synopsis = overview.stdout
      .split(/\n(?= {2}parkway )/)
      .find((part) => part.trimStart().startsWith("parkway serve "));
    const flags = serveHelp.stdout.match(/^ {2}--[a-z-]+/gm)!.map((f) => f.trim());
    for (const flag of flags) expect(synopsis).toContain(flag);
  });

  it("names an unknown command and exits 2", async () => {
    const res = await run(["serv"]);
    expect(res.code).toBe(2);
    expect(res.stderr.split("\n")[0]).toBe("parkway: unknown command 'serv'");
  });
});
