import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runServe, tempDir } from "../helpers/spawn-server.js";

// A directory under /proc cannot be made although its parent exists: mkdir says ENOENT. Node's
// recursive mkdir (which LevelDB's open uses) then loops without end and ignores SIGTERM; the
// server must instead exit at once with one line naming the directory and the errno.
const unmakeable = `/proc/parkway-test-${process.pid}`;

describe.skipIf(!existsSync("/proc/self"))("directories that cannot be made", () => {
  it("refuses a data directory that cannot be made, naming it and the errno", async () => {
    const run = await runServe(["--listen", "127.0.0.1:0", "--data", unmakeable]);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split("\n")).toEqual([
      `parkway: cannot use data directory ${unmakeable}: no such file or directory (ENOENT)`,
    ]);
  });

  it("names the level that cannot be made when the data directory is deeper", async () => {
    const data = path.join(unmakeable, "data");
    const run = await runServe(["--listen", "127.0.0.1:0", "--data", data]);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split("\n")).toEqual([
      `parkway: cannot use data directory ${data}: ${unmakeable}: no such file or directory (ENOENT)`,
    ]);
  });

  it("refuses an agent's working directory that cannot be made, naming the field", async () => {
    const root = await tempDir("parkway-unmakeable-");
    const config = path.join(root, "parkway.json");
    const work = path.join(unmakeable, "work");
    await writeFile(config, JSON.stringify({ agents: [{ id: "a", workingDirectories: [work] }] }));
    const run = await runServe([
      "--listen",
      "127.0.0.1:0",
      "--config",
      config,
      "--data",
      path.join(root, "data"),
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split("\n")).toEqual([
      `parkway: invalid config: agents[0].workingDirectories[0]: cannot use ${work}: ENOENT: no such file or directory, mkdir '${unmakeable}'`,
    ]);
  });
});
