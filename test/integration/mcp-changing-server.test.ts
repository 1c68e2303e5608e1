import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import type { Script } from "../../src/model/scripted/index.js";
import {
  collect,
  type Harness,
  shape,
  startedCalls,
  startHarness,
  toolResult,
} from "../helpers/parkway-harness.js";
import { REPO_ROOT } from "../helpers/spawn-server.js";

const FIXTURE = path.join(REPO_ROOT, "test/fixtures/mcp/changing-server.mjs");

/** "<tool> <input as JSON>" from the person calls mcp__t__<tool> with that input. */
const script: Script = {
  turns: [
    ...["pid", "malformed", "failing", "announce", "die", "fresh", "gone"].map((tool) => ({
      match: { lastUser: `^${tool}\\b` },
      repeat: true,
      toolCalls: [{ name: `mcp__t__${tool}`, input: {} }],
    })),
    { repeat: true, text: "done" },
  ],
};

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function start(toolsFile?: string, downFile?: string, env: Record<string, string> = {}) {
  harness = await startHarness(script, {
    mcpServers: {
      t: {
        command: process.execPath,
        args: [FIXTURE],
        env: {
          ...(toolsFile ? { TOOLS_FILE: toolsFile } : {}),
          ...(downFile ? { DOWN_FILE: downFile } : {}),
          ...env,
        },
      },
    },
  });
  const session = await harness.client.createSession({ agentId: "test" });
  const chat = await harness.client.attach(session.id);
  const call = async (text: string) => {
    const events = await collect(chat.message(text));
    const [id] = startedCalls(events);
    return { events, ...toolResult(events, id!) };
  };
  return { harness, chat, call };
}

const tool = (name: string, annotations: Record<string, boolean>, properties = {}) => ({
  name,
  inputSchema: { type: "object", properties },
  annotations,
});

describe("an MCP server that answers oddly or changes its tools", () => {
  it("a result that is not a tool result, or an error of code -32000, fails that call only", async () => {
    const { harness, chat, call } = await start();
    const first = await call("pid");
    expect(first.text).toMatch(/^pid \d+$/);

    const malformed = await call("malformed");
    expect(malformed.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(malformed.text).toBe(
      "MCP server t failed the call of malformed: its answer is not a tool result: " +
        "content.0.text: Invalid input: expected string, received undefined",
    );
    const failing = await call("failing");
    expect(failing.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(failing.text).toBe(
      "MCP server t failed the call of failing: MCP error -32000: the backend is down",
    );

    // The same process still serves: the connection was not taken for lost.
    expect((await call("pid")).text).toBe(first.text);
    expect(harness.log.entries.filter((e) => e.msg === "MCP server not available")).toEqual([]);
    chat.close();
  });

  it("a tool is judged by the server's latest listing: after a restart of the server, and when it announces a change", async () => {
    const toolsFile = path.join(await mkdtemp(path.join(tmpdir(), "parkway-mcp-tools-")), "t.json");
    await writeFile(
      toolsFile,
      JSON.stringify([
        tool("pid", { readOnlyHint: true }),
        tool("gone", { readOnlyHint: true }),
        tool("die", { readOnlyHint: true }),
        tool("announce", { readOnlyHint: true }),
      ]),
    );
    const { harness, chat, call } = await start(toolsFile);
    expect((await call("pid")).state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);

    // The server is upgraded: pid now changes things, gone is gone, and it restarts.
    await writeFile(
      toolsFile,
      JSON.stringify([
        tool("pid", { readOnlyHint: false, destructiveHint: true }, { n: { type: "number" } }),
        tool("announce", { readOnlyHint: true }),
      ]),
    );
    const died = await call("die");
    expect(died.text).toContain("MCP server t is not available");
    await expect
      .poll(async () => {
        const [agent] = await harness.client.listAgents();
        return agent!.tools.find((t) => t.name === "mcp__t__pid")?.inputSchema;
      })
      .toContain('"n"');

    // pid is no longer read-only: it asks instead of running.
    const asked = await call("pid");
    expect(shape(asked.events)).toContain("require_user_confirm");
    expect(asked.state).toBeUndefined();
    const waiting = asked.events.flatMap((e) =>
      e.event?.$case === "requireUserConfirm" ? e.event.value.toolCalls : [],
    );
    await chat.deny(waiting[0]!);
    await collect(chat.untilSettled());
    // gone is neither asked about nor sent to a server that no longer offers it.
    const gone = await call("gone");
    expect(gone.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(gone.text).toBe(
      "invalid input for mcp__t__gone: MCP server t no longer offers this tool",
    );

    // A tool added while the server runs comes when the server announces its list changed.
    await writeFile(
      toolsFile,
      JSON.stringify([
        tool("announce", { readOnlyHint: true }),
        tool("fresh", { readOnlyHint: true }),
      ]),
    );
    expect((await call("announce")).text).toBe("announced");
    await expect
      .poll(async () => {
        const [agent] = await harness.client.listAgents();
        return agent!.tools.map((t) => t.name).filter((n) => n.startsWith("mcp__"));
      })
      .toContain("mcp__t__fresh");
    const fresh = await call("fresh");
    expect(fresh.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(fresh.text).toBe(
      "MCP server t failed the call of fresh: MCP error -32602: no tool fresh",
    );
    chat.close();
  });

  it("a parked call of a server that is down when Parkway restarts: confirmed once the server is back, it runs", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "parkway-mcp-down-"));
    const toolsFile = path.join(dir, "t.json");
    const downFile = path.join(dir, "down");
    await writeFile(toolsFile, JSON.stringify([tool("pid", {})]));
    const { harness, chat, call } = await start(toolsFile, downFile);
    const asked = await call("pid");
    expect(shape(asked.events).slice(-2)).toEqual(["require_user_confirm", "reply_parked"]);
    const [callId] = startedCalls(asked.events);
    chat.close();

    // Parkway restarts while the server cannot start: its tools are not known yet.
    const from = harness.log.entries.length;
    await harness.restart(() => writeFile(downFile, ""));
    const retrying = () =>
      harness.log.entries
        .slice(from)
        .filter((e) => e.msg === "MCP server not available")
        .map((e) => e.obj as { retryInMs?: number });
    // Its retries back off: wait for one due seconds later, so only a call can make it try now.
    await expect
      .poll(() => retrying().some((e) => (e.retryInMs ?? 0) >= 2000), { timeout: 20_000 })
      .toBe(true);
    const [agent] = await harness.client.listAgents();
    expect(agent!.tools.some((t) => t.name === "mcp__t__pid")).toBe(false);

    // The server can start again; the person confirms the parked call.
    await rm(downFile);
    const parked = await harness.client.getSession(asked.events[0]!.sessionId);
    const again = await harness.client.attach(parked.id, { afterSeq: parked.lastSeq });
    await again.confirm(parked.pendingToolCalls[0]!);
    const after = await collect(again.untilSettled());
    again.close();
    const result = toolResult(after, callId!);
    expect(result.state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    expect(result.text).toMatch(/^pid \d+$/);
  }, 60_000);

  it("a server slower to start than Parkway waits for is left to start, not started over", async () => {
    const startsFile = path.join(await mkdtemp(path.join(tmpdir(), "parkway-mcp-slow-")), "starts");
    // Answers its handshake 32 s after it started: Parkway serves after 30 s without its tools.
    const { harness, chat, call } = await start(undefined, undefined, {
      STARTS_FILE: startsFile,
      START_DELAY_MS: "32000",
    });
    const names = async () => (await harness.client.listAgents())[0]!.tools.map((t) => t.name);
    expect(await names()).not.toContain("mcp__t__pid");
    await expect.poll(names, { timeout: 30_000, interval: 200 }).toContain("mcp__t__pid");
    const pid = (await call("pid")).text;
    // One process: the one that was slow to start, still running.
    const starts = (await readFile(startsFile, "utf8")).trim().split("\n");
    expect(starts).toEqual([pid.replace("pid ", "")]);
    chat.close();
  }, 120_000);
});
