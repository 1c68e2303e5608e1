import { mkdtemp } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createParkwayClient } from "../../src/client/index.js";
import { parseConfig } from "../../src/config/index.js";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import { startScriptedModel } from "../../src/model/scripted/index.js";
import { startParkway } from "../../src/runtime/start-parkway.js";
import { captureLog } from "../helpers/capture-log.js";
import { collect, startedCalls, toolResult } from "../helpers/parkway-harness.js";
import { REPO_ROOT } from "../helpers/spawn-server.js";

const FIXTURE = path.join(REPO_ROOT, "test/fixtures/mcp/oversized-result.mjs");

const closers: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe("an MCP tool result too large to read", () => {
  it("fails the call with a reason that says so, and says so in the log", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "parkway-mcp-oversized-"));
    const model = await startScriptedModel({
      script: {
        turns: [
          { match: { lastUser: "^huge" }, toolCalls: [{ name: "mcp__t__huge", input: {} }] },
          { match: { lastUser: "^small" }, toolCalls: [{ name: "mcp__t__small", input: {} }] },
          { repeat: true, text: "done" },
        ],
      },
    });
    closers.push(() => model.close());
    const log = captureLog();
    const parkway = await startParkway({
      config: parseConfig({
        listen: "127.0.0.1:0",
        data: path.join(root, "data"),
        model: { url: model.url, name: "scripted", maxRetries: 0 },
        agents: [
          {
            id: "test",
            workingDirectories: [path.join(root, "work")],
            permissionMode: "bypass",
            mcpServers: { t: { command: process.execPath, args: [FIXTURE] } },
          },
        ],
      }),
      log,
    });
    closers.push(() => parkway.close());
    const client = createParkwayClient(parkway.address);
    closers.push(() => client.close());
    const session = await client.createSession({ agentId: "test" });
    const chat = await client.attach(session.id);
    closers.push(() => chat.close());

    const events = await collect(chat.message("huge"));
    const [call] = startedCalls(events);
    const result = toolResult(events, call!);
    expect(result.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(result.text).toContain("larger than 10 MiB");
    const warned = log.entries.filter(
      (e) => e.level === "warn" && e.msg === "MCP server not available",
    );
    expect(warned.map((e) => e.obj)).toMatchObject([
      { reason: expect.stringContaining("larger than 10 MiB") as string },
    ]);

    // The server is started again, and its next call runs.
    await expect
      .poll(
        async () => {
          const more = await collect(chat.message("small"));
          const [next] = startedCalls(more);
          return toolResult(more, next!).text;
        },
        { timeout: 15_000, interval: 500 },
      )
      .toBe("ok");
  });

  it("over Streamable HTTP: a result over 10 MiB is not read whole; the call fails, the next one runs", async () => {
    // A Streamable HTTP server that answers in JSON; "huge" answers 11 MiB.
    let sessions = 0;
    const server = createServer((req, res) => {
      if (req.method !== "POST") return void res.writeHead(405).end();
      let text = "";
      req.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
      req.on("end", () => {
        const message = JSON.parse(text) as {
          id?: number;
          method: string;
          params?: { protocolVersion?: string; name?: string };
        };
        if (message.id === undefined) return void res.writeHead(202).end();
        const answer = (result: object) =>
          res
            .writeHead(200, {
              "content-type": "application/json",
              "mcp-session-id": String(req.headers["mcp-session-id"] ?? `s${++sessions}`),
            })
            .end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
        if (message.method === "initialize") {
          answer({
            protocolVersion: message.params?.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: "huge-http", version: "1" },
          });
        } else if (message.method === "tools/list") {
          answer({
            tools: ["huge", "small"].map((name) => ({ name, inputSchema: { type: "object" } })),
          });
        } else if (message.params?.name === "small") {
          answer({ content: [{ type: "text", text: "ok" }] });
        } else {
          res.writeHead(200, { "content-type": "application/json" });
          res.write(
            `{"jsonrpc":"2.0","id":${message.id},"result":{"content":[{"type":"text","text":"`,
          );
          for (let i = 0; i < 11; i++) res.write("x".repeat(1024 * 1024));
          res.end('"}]}}');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const root = await mkdtemp(path.join(tmpdir(), "parkway-mcp-oversized-http-"));
    const model = await startScriptedModel({
      script: {
        turns: [
          { match: { lastUser: "^huge" }, toolCalls: [{ name: "mcp__t__huge", input: {} }] },
          { match: { lastUser: "^small" }, toolCalls: [{ name: "mcp__t__small", input: {} }] },
          { repeat: true, text: "done" },
        ],
      },
    });
    closers.push(() => model.close());
    const parkway = await startParkway({
      config: parseConfig({
        listen: "127.0.0.1:0",
        data: path.join(root, "data"),
        model: { url: model.url, name: "scripted", maxRetries: 0 },
        agents: [
          {
            id: "test",
            workingDirectories: [path.join(root, "work")],
            permissionMode: "bypass",
            mcpServers: { t: { url } },
          },
        ],
      }),
      log: captureLog(),
    });
    closers.push(() => parkway.close());
    const client = createParkwayClient(parkway.address);
    closers.push(() => client.close());
    const session = await client.createSession({ agentId: "test" });
    const chat = await client.attach(session.id);
    closers.push(() => chat.close());

    const events = await collect(chat.message("huge"));
    const result = toolResult(events, startedCalls(events)[0]!);
    expect(result.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(result.text).toContain("larger than 10 MiB");
    const next = await collect(chat.message("small"));
    expect(toolResult(next, startedCalls(next)[0]!).text).toBe("ok");
  });
});
