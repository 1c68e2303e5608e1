import { mkdtemp, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import {
  collect,
  type Harness,
  startedCalls,
  startHarness,
  toolResult,
} from "../helpers/parkway-harness.js";
import { REPO_ROOT } from "../helpers/spawn-server.js";

const modulePath = (pkg: string) => path.join(REPO_ROOT, "node_modules", pkg, "dist/index.js");

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  delete process.env.PARKWAY_MCP_SECRET;
});

async function callOnce(tool: string): Promise<{ state?: number; text: string }> {
  const session = await h!.client.createSession({ agentId: "test" });
  const chat = await h!.client.attach(session.id);
  const events = await collect(chat.message("go"));
  chat.close();
  const [callId] = startedCalls(events);
  expect(
    events.some((e) => e.event?.$case === "toolCallStart" && e.event.value.toolCallName === tool),
  ).toBe(true);
  return toolResult(events, callId!);
}

describe("how a stdio MCP server is started", () => {
  it("gets Bash's clean environment plus its env, never the server's own variables", async () => {
    process.env.PARKWAY_MCP_SECRET = "do-not-leak";
    h = await startHarness(
      {
        turns: [
          { match: { lastUser: "go" }, toolCalls: [{ name: "mcp__e__get-env", input: {} }] },
          { match: { toolName: "mcp__e__get-env" }, text: "ok" },
        ],
      },
      {
        bash: { env: { FROM_BASH_CONFIG: "1" } },
        mcpServers: {
          e: {
            command: process.execPath,
            args: [modulePath("@modelcontextprotocol/server-everything"), "stdio"],
            env: { MCP_ONLY: "yes", PARKWAY_TEST_FILE: process.env.PARKWAY_TEST_FILE ?? "" },
          },
        },
      },
    );
    const result = await callOnce("mcp__e__get-env");
    expect(result.state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    const env = JSON.parse(result.text) as Record<string, string>;
    expect(env).toMatchObject({
      MCP_ONLY: "yes",
      FROM_BASH_CONFIG: "1",
      LANG: "C.UTF-8",
      TERM: "dumb",
      PATH: process.env.PATH,
    });
    expect(env.PARKWAY_MCP_SECRET).toBeUndefined();
  });

  it("runs in the agent's first working directory", async () => {
    const wd = await mkdtemp(path.join(tmpdir(), "parkway-mcp-cwd-"));
    h = await startHarness(
      {
        turns: [
          {
            match: { lastUser: "go" },
            toolCalls: [{ name: "mcp__fs__list_allowed_directories", input: {} }],
          },
          { match: { toolName: "mcp__fs__list_allowed_directories" }, text: "ok" },
        ],
      },
      {
        workingDirectories: [wd],
        // "." is the server's working directory.
        mcpServers: {
          fs: {
            command: process.execPath,
            args: [modulePath("@modelcontextprotocol/server-filesystem"), "."],
            env: { PARKWAY_TEST_FILE: process.env.PARKWAY_TEST_FILE ?? "" },
          },
        },
      },
    );
    const result = await callOnce("mcp__fs__list_allowed_directories");
    expect(result.text.split("\n").slice(1)).toEqual([await realpath(wd)]);
  });
});
