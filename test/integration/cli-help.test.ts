import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
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

  it("names an unknown command and exits 2", async () => {
    const res = await run(["serv"]);
    expect(res.code).toBe(2);
    expect(res.stderr.split("\n")[0]).toBe("parkway: unknown command 'serv'");
  });
});
