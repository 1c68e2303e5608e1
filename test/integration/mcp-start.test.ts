import { randomUUID } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { startParkway } from "../../src/runtime/start-parkway.js";
import { captureLog } from "../helpers/capture-log.js";
import { markedProcesses } from "../helpers/marked-processes.js";
import { REPO_ROOT } from "../helpers/spawn-server.js";

const EVERYTHING = path.join(
  REPO_ROOT,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
const MARK = "PARKWAY_MCP_TEST";

let blocker: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (blocker ? blocker.close(resolve) : resolve(undefined)));
  blocker = undefined;
});

async function config(mark: string, listen: string, agent: Record<string, unknown> = {}) {
  const root = await mkdtemp(path.join(tmpdir(), "parkway-mcp-start-"));
  return parseConfig({
    listen,
    data: path.join(root, "data"),
    model: { url: "http://127.0.0.1:9/v1", name: "none" },
    agents: [
      {
        id: "test",
        workingDirectories: [path.join(root, "work")],
        mcpServers: {
          e: {
            command: process.execPath,
            args: [EVERYTHING, "stdio"],
            env: { [MARK]: mark, PARKWAY_TEST_FILE: process.env.PARKWAY_TEST_FILE ?? "" },
          },
        },
        ...agent,
      },
    ],
  });
}

describe("starting Parkway with MCP servers", () => {
  it("fails on a port in use before any MCP server is started", async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    const mark = randomUUID();
    const log = captureLog();
    await expect(
      startParkway({ config: await config(mark, `127.0.0.1:${port}`), log }),
    ).rejects.toThrow(/address in use/);
    expect(markedProcesses(MARK, mark)).toEqual([]);
    // Never connected (nor started, then stopped).
    expect(log.entries.filter((e) => e.msg?.startsWith("MCP"))).toEqual([]);
  });

  it("refuses an MCP tool named like another tool of the agent, naming the field, and stops the server", async () => {
    const mark = randomUUID();
    const log = captureLog();
    const start = startParkway({
      config: await config(mark, "127.0.0.1:0", {
        externalTools: [{ name: "mcp__e__echo" }],
      }),
      log,
    });
    await expect(start).rejects.toThrow(
      "invalid config: agents[0].mcpServers: tool mcp__e__echo is already a tool of the agent",
    );
    expect(log.entries.some((e) => e.msg === "MCP server connected")).toBe(true);
    expect(markedProcesses(MARK, mark)).toEqual([]);
  });
});
