import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { listServices } from "../helpers/grpc-tools.js";
import { type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";

const REGISTER = fileURLToPath(new URL("../helpers/module-log/register.mjs", import.meta.url));

/** The ES modules the server's process has loaded so far. */
async function loaded(log: string): Promise<string[]> {
  return (await readFile(log, "utf8")).split("\n").filter(Boolean);
}

const connect = (urls: string[]) => urls.filter((u) => u.includes("/node_modules/@connectrpc/"));
const reflectionFiles = (urls: string[]) => urls.filter((u) => u.endsWith("/reflection-files.js"));
/** The openai SDK's client (its resources and request pipeline): Parkway takes only its errors. */
const openaiClient = (urls: string[]) =>
  urls.filter((u) => /\/node_modules\/openai\/client\./.test(u));

describe("what `parkway serve` loads before it serves", () => {
  let server: SpawnedServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  async function serve(args: string[] = []): Promise<string> {
    const log = path.join(await tempDir(), "modules.txt");
    server = await spawnServer({
      direct: true,
      args,
      env: {
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${REGISTER}`.trim(),
        PARKWAY_MODULE_LOG: log,
      },
    });
    return log;
  }

  it("loads no web port code and no openai client, and the reflection descriptors on the first reflection call", async () => {
    const log = await serve();
    const atStart = await loaded(log);
    expect(atStart.some((u) => u.endsWith("/dist/cli/main.js"))).toBe(true);
    expect(connect(atStart)).toEqual([]);
    expect(atStart.some((u) => u.includes("/node_modules/openai/core/error."))).toBe(true);
    expect(openaiClient(atStart)).toEqual([]);
    expect(reflectionFiles(atStart)).toEqual([]);

    const services = await listServices(server!.address);
    expect(services).toContain("parkway.v1.AgentService");
    expect(reflectionFiles(await loaded(log))).toHaveLength(1);
  });

  it("loads Connect when a web port is configured", async () => {
    const log = await serve(["--web-listen", "127.0.0.1:0"]);
    expect(server!.webUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(connect(await loaded(log)).length).toBeGreaterThan(0);
  });
});
