import { existsSync } from "node:fs";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import {
  collect,
  type Harness,
  kind,
  startedCalls,
  startHarness,
  toolResult,
} from "../helpers/parkway-harness.js";
import { REPO_ROOT } from "../helpers/spawn-server.js";

/** The reference filesystem server, run from node_modules. */
const FS_SERVER = path.join(
  REPO_ROOT,
  "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
);

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Parkway with agent "test" whose MCP server fs may touch only its working directory. */
async function startWithFs(turns: unknown[]): Promise<{ wd: string }> {
  const wd = await mkdtemp(path.join(tmpdir(), "parkway-mcp-fs-"));
  h = await startHarness({ turns } as never, {
    workingDirectories: [wd],
    mcpServers: { fs: { command: process.execPath, args: [FS_SERVER, wd] } },
  });
  return { wd };
}

async function newSession(): Promise<{ id: string; wd: string }> {
  const session = await h!.client.createSession({ agentId: "test" });
  return { id: session.id, wd: session.workingDirectories[0]! };
}

const writeTurn = (word: string, file: string, content: string) => ({
  match: { lastUser: word },
  toolCalls: [{ name: "mcp__fs__write_file", input: { path: file, content } }],
});

describe("MCP filesystem server", () => {
  it("lists the server's tools as mcp__fs__<tool> with its schemas", async () => {
    await startWithFs([{ text: "unused" }]);
    const [agent] = await h!.client.listAgents();
    const names = agent!.tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(["mcp__fs__read_file", "mcp__fs__write_file", "Bash", "Read"]),
    );
    const write = agent!.tools.find((t) => t.name === "mcp__fs__write_file")!;
    expect(JSON.parse(write.inputSchema)).toMatchObject({
      type: "object",
      properties: { path: { type: "string" }, content: { type: "string" } },
      required: expect.arrayContaining(["path", "content"]) as unknown,
    });
    expect(write.external).toBe(false);
  });

  it("asks before a write: approved, the file is written; denied, it is not", async () => {
    const { wd } = await startWithFs([{ text: "placeholder" }]);
    const session = await newSession();
    const approved = path.join(session.wd, "approved.txt");
    const denied = path.join(session.wd, "denied.txt");
    await h!.model.reset({
      turns: [
        writeTurn("first", approved, "yes"),
        writeTurn("second", denied, "no"),
        { match: { toolName: "mcp__fs__write_file" }, text: "done", repeat: true },
      ],
    });
    expect(session.wd.startsWith(await realDir(wd))).toBe(true);

    const chat = await h!.client.attach(session.id);
    const first = await collect(chat.message("first"));
    expect(first.map(kind).slice(-2)).toEqual(["require_user_confirm", "reply_parked"]);
    const asked = confirmCall(first);
    expect(asked.name).toBe("mcp__fs__write_file");
    expect(asked.suggestedRules.map((r) => r.toolName)).toEqual(["mcp__fs__write_file"]);
    expect(existsSync(approved)).toBe(false);
    await chat.confirm(asked);
    const resumed = await collect(chat.untilSettled());
    const [callId] = startedCalls(first);
    expect(toolResult(resumed, callId!).state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    expect(await readFile(approved, "utf8")).toBe("yes");
    expect(lastEnd(resumed)).toBe(1);

    const second = await collect(chat.message("second"));
    await chat.deny(confirmCall(second), "not that one");
    const after = await collect(chat.untilSettled());
    const [deniedId] = startedCalls(second);
    expect(toolResult(after, deniedId!).state).toBe(ToolResultState.TOOL_RESULT_STATE_DENIED);
    expect(existsSync(denied)).toBe(false);
    chat.close();
  });

  it("runs a read-only tool (read_file) without asking in default mode", async () => {
    await startWithFs([{ text: "placeholder" }]);
    const session = await newSession();
    const file = path.join(session.wd, "notes.txt");
    await writeFile(file, "the secret word is parkway\n");
    await h!.model.reset({
      turns: [
        {
          match: { lastUser: "read" },
          toolCalls: [{ name: "mcp__fs__read_file", input: { path: file } }],
        },
        { match: { toolName: "mcp__fs__read_file" }, text: "read it" },
      ],
    });
    const chat = await h!.client.attach(session.id);
    const events = await collect(chat.message("read"));
    chat.close();
    expect(events.map(kind)).not.toContain("require_user_confirm");
    const [callId] = startedCalls(events);
    const result = toolResult(events, callId!);
    expect(result.state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    expect(result.text).toContain("the secret word is parkway");
    expect(lastEnd(events)).toBe(1);
    // The model got the file's text as the tool's result.
    expect(JSON.stringify(h!.model.requests.at(-1)?.messages)).toContain("the secret word");
  });

  it("gives the model an error naming the field when the input does not fit the server's schema", async () => {
    await startWithFs([
      {
        match: { lastUser: "bad" },
        toolCalls: [{ name: "mcp__fs__read_file", input: { file: "x" } }],
      },
      { match: { toolName: "mcp__fs__read_file" }, text: "ok" },
    ]);
    const session = await newSession();
    const chat = await h!.client.attach(session.id);
    const events = await collect(chat.message("bad"));
    chat.close();
    const [callId] = startedCalls(events);
    const result = toolResult(events, callId!);
    expect(result.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(result.text).toContain(".path");
  });
});

function confirmCall(events: ServerEvent[]) {
  const e = events.find((x) => x.event?.$case === "requireUserConfirm");
  if (e?.event?.$case !== "requireUserConfirm") throw new Error("no REQUIRE_USER_CONFIRM");
  return e.event.value.toolCalls[0]!;
}

function lastEnd(events: ServerEvent[]): number | undefined {
  const e = events.findLast((x) => x.event?.$case === "replyEnd");
  return e?.event?.$case === "replyEnd" ? e.event.value.finishedReason : undefined;
}

async function realDir(dir: string): Promise<string> {
  const { realpath } = await import("node:fs/promises");
  return realpath(dir);
}
