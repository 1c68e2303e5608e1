import { writeFile } from "node:fs/promises";
import { connect } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createParkwayClient } from "../../src/client/index.js";
import { PermissionBehavior } from "../../src/generated/parkway/v1/permission.js";
import { healthCheck, listServices } from "../helpers/grpc-tools.js";
import { runServe, type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";

describe("parkway serve (the README's serve command)", () => {
  let server: SpawnedServer;

  beforeAll(async () => {
    server = await spawnServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("answers SERVING to health checks for the server and each service", async () => {
    for (const service of [
      "",
      "parkway.v1.AgentService",
      "parkway.v1.PermissionService",
      "parkway.v1.AuditService",
    ]) {
      expect(await healthCheck(server.address, service)).toBe("SERVING");
    }
  });

  it("lists the parkway.v1 services through reflection", async () => {
    const services = await listServices(server.address);
    expect(services).toEqual(
      expect.arrayContaining([
        "parkway.v1.AgentService",
        "parkway.v1.PermissionService",
        "parkway.v1.AuditService",
      ]),
    );
  });

  it("explains a permission decision for the default agent", async () => {
    const client = createParkwayClient(server.address);
    const decision = await client.explain({
      agentId: "assistant",
      toolName: "Bash",
      input: JSON.stringify({ command: "rm -rf /" }),
    });
    client.close();
    expect(decision.behavior).toBe(PermissionBehavior.PERMISSION_BEHAVIOR_ASK);
    expect(decision.bypassImmune).toBe(true);
    expect(decision.check).toMatch(/^safety\./);
  });

  it("replies through the built-in demo model when no model is configured", async () => {
    expect(server.output.join("\n")).toContain("using the built-in demo model");
    const client = createParkwayClient(server.address);
    const agents = await client.listAgents();
    expect(agents.map((a) => a.id)).toEqual(["assistant"]);
    const session = await client.createSession({ agentId: "assistant" });
    const res = await client.reply({
      sessionId: session.id,
      input: { $case: "userMessage", value: { text: "hello?", content: [] } },
    });
    client.close();
    expect(res.message?.finishedReason).toBe(1);
    const text = res.message?.content
      .map((b) => (b.block?.$case === "text" ? b.block.value.text : ""))
      .join("");
    expect(text).toContain("Parkway demo model");
  });

  it("refuses a second server on the same data directory, and the first keeps serving", async () => {
    const second = await runServe(["--listen", "127.0.0.1:0", "--data", server.dataDir]);
    expect(second.code).not.toBe(0);
    const lines = second.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `parkway: data directory ${server.dataDir} is in use by another Parkway server`,
    );
    expect(await healthCheck(server.address)).toBe("SERVING");
  });
});

describe("npm start under a supervisor", () => {
  it("stops in order when npm alone gets SIGTERM, and its port closes", async () => {
    const server = await spawnServer();
    try {
      const npmExited = new Promise((resolve) => server.child.once("exit", resolve));
      // A supervisor signals the process it started (npm), not its process group.
      process.kill(server.child.pid!, "SIGTERM");
      await npmExited;
      await expect
        .poll(() => server.output.some((line) => line.includes('"msg":"stopped"')), {
          timeout: 20_000,
        })
        .toBe(true);
      const shutdown = server.output.find((line) => line.includes('"msg":"shutting down"'));
      expect(JSON.parse(shutdown ?? "{}")).toMatchObject({ signal: "SIGTERM" });
      await expect.poll(() => portOpen(server.address), { timeout: 20_000 }).toBe(false);
    } finally {
      await server.stop();
    }
  });
});

/** Whether something accepts TCP connections at `address` (HOST:PORT). */
function portOpen(address: string): Promise<boolean> {
  const [host, port] = [
    address.slice(0, address.lastIndexOf(":")),
    address.slice(address.lastIndexOf(":") + 1),
  ];
  return new Promise((resolve) => {
    const socket = connect({ host, port: Number(port) });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

describe("parkway serve with a bad configuration", () => {
  it("exits non-zero with one line naming an unknown key", async () => {
    const dir = await tempDir();
    const file = path.join(dir, "parkway.json");
    await writeFile(file, JSON.stringify({ listen: "127.0.0.1:0", modle: { name: "x" } }));
    const run = await runServe(["--config", file, "--data", path.join(dir, "data")]);
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe("");
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`modle (from config file ${file}): unknown key`);
  });

  it("exits non-zero with one line naming an invalid port", async () => {
    const dir = await tempDir();
    const run = await runServe(["--listen", "127.0.0.1:70000", "--data", dir]);
    expect(run.code).not.toBe(0);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^parkway: invalid config: listen \(from flag --listen\): invalid port 70000/,
    );
  });

  it("names a bad value of the config file that PARKWAY_CONFIG names, and the format", async () => {
    const dir = await tempDir();
    const file = path.join(dir, "parkway.json");
    await writeFile(file, JSON.stringify({ model: { url: "not a url" } }));
    const run = await runServe(["--data", dir], { env: { PARKWAY_CONFIG: file } });
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toContain(
      `model.url (from config file ${file}): expected an http or https URL such as`,
    );
  });
});
