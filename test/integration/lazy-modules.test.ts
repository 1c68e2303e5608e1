import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { listServices } from "../helpers/grpc-tools.js";
import { type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";

const REGISTER = fileURLToPath(new URL("../helpers/module-log/register.mjs", import.meta.url));

/** Matches the modules of a package under node_modules, or of a file of Parkway's. */
const pkg = (name: string) => (url: string) => url.includes(`/node_modules/${name}/`);
const own = (file: string) => (url: string) => url.endsWith(`/dist/${file}`);

/** What a server that loads nothing it does not use leaves unloaded until it needs it. */
const LAZY = {
  "the web port (Connect)": pkg("@connectrpc/connect"),
  "the reflection descriptors": own("server/reflection-files.js"),
  "the openai SDK's client": (u: string) => /\/node_modules\/openai\/client\./.test(u),
  "the tracing SDK": pkg("@opentelemetry/sdk-trace-base"),
  "prom-client": pkg("prom-client"),
  "ajv (external tools' schemas)": pkg("ajv"),
};

describe("what `parkway serve` loads before it serves", () => {
  let server: SpawnedServer | undefined;
  let log = "";
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  async function serve(args: string[] = []): Promise<void> {
    log = path.join(await tempDir(), "modules.txt");
    server = await spawnServer({
      direct: true,
      args,
      env: {
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${REGISTER}`.trim(),
        PARKWAY_MODULE_LOG: log,
      },
    });
  }

  /** Every module the server's process has loaded so far, ES and CommonJS. */
  async function loaded(): Promise<string[]> {
    const dumps = async () => (await readFile(log, "utf8")).split("\n").filter((l) => l === "--");
    const before = (await dumps()).length;
    server!.child.kill("SIGUSR2");
    await expect.poll(async () => (await dumps()).length).toBe(before + 1);
    return (await readFile(log, "utf8")).split("\n").filter((l) => l !== "" && l !== "--");
  }

  /** Which of `LAZY` are loaded. */
  const lazyLoaded = (urls: string[]) =>
    Object.entries(LAZY)
      .filter(([, loads]) => urls.some(loads))
      .map(([name]) => name);

  it("loads none of what it may need later, and the reflection descriptors on the first reflection call", async () => {
    await serve();
    const atStart = await loaded();
    expect(atStart.some(own("cli/main.js"))).toBe(true);
    expect(atStart.some(pkg("@grpc/grpc-js"))).toBe(true); // CommonJS, seen too
    expect(atStart.some((u) => u.includes("/node_modules/openai/core/error."))).toBe(true);
    expect(lazyLoaded(atStart)).toEqual([]);

    const services = await listServices(server!.address);
    expect(services).toContain("parkway.v1.AgentService");
    expect(lazyLoaded(await loaded())).toEqual(["the reflection descriptors"]);
  });

  it("loads Connect when a web port is configured, and prom-client with metrics", async () => {
    await serve(["--web-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"]);
    expect(server!.webUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(lazyLoaded(await loaded())).toEqual(["the web port (Connect)", "prom-client"]);
  });
});
