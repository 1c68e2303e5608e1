/**
 * A start that fails after the agents' working directories were made removes the ones it made
 * while they are still empty; directories that existed before stay. Real `parkway serve`.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runServe, tempDir } from "../helpers/spawn-server.js";

let taken: Server;
let port: number;

beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  port = (taken.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((resolve) => taken.close(resolve));
});

describe("a start that fails", () => {
  it("removes the working directories it made, keeps those that were there", async () => {
    const root = await tempDir("parkway-failed-start-");
    const fresh = path.join(root, "fresh", "a", "b");
    const existing = path.join(root, "existing");
    await mkdir(existing);
    const config = path.join(root, "parkway.json");
    await writeFile(
      config,
      JSON.stringify({
        agents: [
          { id: "one", workingDirectories: [fresh] },
          { id: "two", workingDirectories: [existing, path.join(existing, "sub")] },
        ],
      }),
    );
    const run = await runServe([
      "--listen",
      `127.0.0.1:${port}`,
      "--config",
      config,
      "--data",
      path.join(root, "data"),
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `parkway: cannot listen on 127.0.0.1:${port}: address in use (EADDRINUSE)`,
    );
    expect(existsSync(path.join(root, "fresh"))).toBe(false);
    expect(existsSync(path.join(existing, "sub"))).toBe(false);
    expect(existsSync(existing)).toBe(true);
    expect(existsSync(path.join(root, "data"))).toBe(false);
  });
});
