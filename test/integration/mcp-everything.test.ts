import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { markedProcesses } from "../helpers/marked-processes.js";
import {
  collect,
  type Harness,
  startedCalls,
  startHarness,
  toolResult,
} from "../helpers/parkway-harness.js";
import { REPO_ROOT } from "../helpers/spawn-server.js";

/** The reference "everything" server, run from node_modules. */
const EVERYTHING = path.join(
  REPO_ROOT,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);

let h: Harness | undefined;
let http: ChildProcess | undefined;
/** What the Streamable HTTP server wrote to its standard output. */
let httpOutput: string[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (http && http.exitCode === null && http.signalCode === null) {
    const exited = new Promise((resolve) => http!.once("exit", resolve));
    http.kill("SIGKILL");
    await exited;
  }
  http = undefined;
});

/** A marker in the stdio server's environment, to find its process (and its leaks). */
const MARK = "PARKWAY_MCP_TEST";

function stdioServer(mark: string) {
  return {
    command: process.execPath,
    args: [EVERYTHING, "stdio"],
    env: { [MARK]: mark, PARKWAY_TEST_FILE: process.env.PARKWAY_TEST_FILE ?? "" },
  };
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Starts the everything server in Streamable HTTP mode (on a free port); resolves its /mcp URL. */
async function startHttpServer(port?: number): Promise<string> {
  port ??= await freePort();
  const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  http = child;
  httpOutput = [];
  createInterface({ input: child.stdout }).on("line", (line) => httpOutput.push(line));
  const lines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stderr }).on("line", (line) => {
      lines.push(line);
      if (line.includes(`listening on port ${port}`)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`exited ${code}: ${lines.join("\n")}`)));
  });
  return `http://127.0.0.1:${port}/mcp`;
}

async function stopHttpServer(): Promise<void> {
  const child = http!;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

const SCRIPT = {
  turns: [
    {
      match: { lastUser: "echo twelve" },
      toolCalls: Array.from({ length: 12 }, (_, i) => ({
        name: "mcp__everything__echo",
        input: { message: `echo ${i}` },
      })),
    },
    {
      match: { lastUser: "echo" },
      toolCalls: [{ name: "mcp__everything__echo", input: { message: "hello MCP" } }],
      repeat: true,
    },
    {
      match: { lastUser: "image" },
      toolCalls: [{ name: "mcp__everything__get-tiny-image", input: {} }],
      repeat: true,
    },
    { match: { toolName: "mcp__everything__echo" }, text: "echoed", repeat: true },
    { match: { toolName: "mcp__everything__get-tiny-image" }, text: "seen", repeat: true },
  ],
};

async function run(text: string): Promise<ServerEvent[]> {
  const session = await h!.client.createSession({ agentId: "test" });
  const chat = await h!.client.attach(session.id);
  try {
    return await collect(chat.message(text));
  } finally {
    chat.close();
  }
}

function dataParts(events: ServerEvent[], callId: string) {
  return events.flatMap((e) =>
    e.event?.$case === "toolResultDataDelta" && e.event.value.toolCallId === callId
      ? [e.event.value]
      : [],
  );
}

/** Echo gives its text; the tiny image arrives as an image/png data part the model is shown. */
async function checkEchoAndImage(): Promise<void> {
  const echo = await run("echo");
  const echoResult = toolResult(echo, startedCalls(echo)[0]!);
  expect(echoResult).toEqual({
    state: ToolResultState.TOOL_RESULT_STATE_SUCCESS,
    text: "Echo: hello MCP",
  });

  const image = await run("image");
  const [imageCall] = startedCalls(image);
  expect(toolResult(image, imageCall!).text).toContain("Here's the image you requested:");
  const parts = dataParts(image, imageCall!);
  expect(parts).toHaveLength(1);
  const part = parts[0]!;
  expect(part.mediaType).toBe("image/png");
  expect(part.source?.$case).toBe("data");
  // A PNG's signature.
  const bytes = part.source?.$case === "data" ? part.source.value : Buffer.alloc(0);
  expect(bytes.subarray(1, 4).toString("latin1")).toBe("PNG");
  const request = JSON.stringify(h!.model.requests.at(-1)?.messages);
  expect(request).toContain("data:image/png;base64,iVBORw0KGgo");
}

describe("MCP everything server", () => {
  it("over stdio: echo, and an image as a data part", async () => {
    h = await startHarness(SCRIPT, {
      mcpServers: { everything: stdioServer(randomUUID()) },
    });
    await checkEchoAndImage();
  });

  it("twelve calls in one reply leave no listener behind on the reply's signal", async () => {
    h = await startHarness(SCRIPT, {
      mcpServers: { everything: stdioServer(randomUUID()) },
    });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    try {
      const events = await run("echo twelve");
      const calls = startedCalls(events);
      expect(calls).toHaveLength(12);
      for (const [i, id] of calls.entries()) {
        expect(toolResult(events, id).text).toBe(`Echo: echo ${i}`);
      }
      await sleep(50); // warnings are emitted on the next tick
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.filter((w) => w.startsWith("MaxListenersExceededWarning"))).toEqual([]);
  });

  it("over Streamable HTTP: echo, and an image as a data part", async () => {
    const url = await startHttpServer();
    h = await startHarness(SCRIPT, { mcpServers: { everything: { url } } });
    await checkEchoAndImage();
    // Stopping Parkway ends its session at the server.
    await h.close();
    h = undefined;
    const ended = () => httpOutput.some((l) => l.includes("Received session termination request"));
    for (let i = 0; i < 50 && !ended(); i++) await sleep(100);
    expect(ended()).toBe(true);
  });

  it("over Streamable HTTP: a form the server asks is answered through Parkway", async () => {
    const url = await startHttpServer();
    const tool = "mcp__everything__trigger-elicitation-request";
    h = await startHarness(
      {
        turns: [
          { match: { lastUser: "form" }, toolCalls: [{ name: tool, input: {} }] },
          { match: { toolName: tool }, text: "thanks" },
        ],
      },
      { mcpServers: { everything: { url } } },
    );
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const first = await collect(chat.message("form"));
    const confirm = first.flatMap((e) =>
      e.event?.$case === "requireUserConfirm" ? e.event.value.toolCalls : [],
    );
    await chat.confirm(confirm[0]!);
    const asked = await collect(chat.untilSettled());
    const question = asked.flatMap((e) =>
      e.event?.$case === "requireExternalExecution" ? e.event.value.toolCalls : [],
    )[0]!;
    expect(question.askedBy).toBe(startedCalls(first)[0]);
    await chat.answer(question, { String: { other: "Grace Hopper" } });
    const after = await collect(chat.untilSettled());
    chat.close();
    const text = toolResult(after, startedCalls(first)[0]!).text;
    expect(text).toContain("User provided the requested information");
    expect(text).toContain('"name": "Grace Hopper"');
  });

  it("a server that dies gives the model a clear error, and is restarted for the next call", async () => {
    const mark = randomUUID();
    h = await startHarness(
      {
        turns: [
          {
            match: { lastUser: "long" },
            toolCalls: [
              {
                name: "mcp__everything__trigger-long-running-operation",
                input: { duration: 60, steps: 60 },
              },
            ],
          },
          {
            match: { toolName: "mcp__everything__trigger-long-running-operation" },
            toolCalls: [{ name: "mcp__everything__echo", input: { message: "back" } }],
          },
          { match: { toolName: "mcp__everything__echo" }, text: "recovered" },
        ],
      },
      { mcpServers: { everything: stdioServer(mark) } },
    );
    const [first] = markedProcesses(MARK, mark);
    expect(first).toBeDefined();

    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const events: ServerEvent[] = [];
    let killed = false;
    for await (const e of chat.message("long")) {
      events.push(e);
      if (!killed && e.event?.$case === "toolResultStart") {
        // The call is under way (read-only: it runs without asking); the server dies.
        await sleep(200);
        process.kill(first!.pid, "SIGKILL");
        killed = true;
      }
    }
    chat.close();
    expect(killed).toBe(true);
    const [longCall, echoCall] = startedCalls(events);
    const failed = toolResult(events, longCall!);
    expect(failed.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(failed.text).toMatch(/^MCP server everything is not available: /);
    expect(toolResult(events, echoCall!)).toEqual({
      state: ToolResultState.TOOL_RESULT_STATE_SUCCESS,
      text: "Echo: back",
    });
    const end = events.findLast((e) => e.event?.$case === "replyEnd");
    expect(end?.event?.$case === "replyEnd" && end.event.value.finishedReason).toBe(1);
    // The model read the error, and a new process serves the server.
    expect(JSON.stringify(h.model.requests[1]?.messages)).toContain(
      "MCP server everything is not available",
    );
    const now = markedProcesses(MARK, mark);
    expect(now.map((p) => p.pid)).not.toContain(first!.pid);
    expect(now).toHaveLength(1);
  });

  it("an interrupt cancels a running MCP call, and stopping Parkway stops the server", async () => {
    const mark = randomUUID();
    h = await startHarness(
      {
        turns: [
          {
            match: { lastUser: "long" },
            toolCalls: [
              {
                name: "mcp__everything__trigger-long-running-operation",
                // Far longer than the test may take.
                input: { duration: 600, steps: 600 },
              },
            ],
          },
        ],
      },
      { mcpServers: { everything: stdioServer(mark) } },
    );
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const events: ServerEvent[] = [];
    for await (const e of chat.message("long")) {
      events.push(e);
      if (e.event?.$case === "toolResultStart") await chat.interrupt();
    }
    chat.close();
    const [callId] = startedCalls(events);
    expect(toolResult(events, callId!).state).toBe(ToolResultState.TOOL_RESULT_STATE_INTERRUPTED);
    const end = events.findLast((e) => e.event?.$case === "replyEnd");
    expect(end?.event?.$case === "replyEnd" && end.event.value.finishedReason).toBe(2);

    expect(markedProcesses(MARK, mark)).toHaveLength(1);
    await h.close();
    h = undefined;
    expect(markedProcesses(MARK, mark)).toEqual([]);
  });

  it("a Streamable HTTP server that goes away gives a clear error; once back, calls work again", async () => {
    const port = await freePort();
    const url = await startHttpServer(port);
    h = await startHarness(SCRIPT, { mcpServers: { everything: { url } } });
    const first = await run("echo");
    expect(toolResult(first, startedCalls(first)[0]!).text).toBe("Echo: hello MCP");

    await stopHttpServer();
    const down = await run("echo");
    const failed = toolResult(down, startedCalls(down)[0]!);
    expect(failed.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(failed.text).toMatch(/^MCP server everything is not available: /);

    await startHttpServer(port);
    const back = await run("echo");
    expect(toolResult(back, startedCalls(back)[0]!)).toEqual({
      state: ToolResultState.TOOL_RESULT_STATE_SUCCESS,
      text: "Echo: hello MCP",
    });
  });

  it("a Streamable HTTP server that dies during a call fails the call at once, not at its timeout", async () => {
    const port = await freePort();
    const url = await startHttpServer(port);
    h = await startHarness(
      {
        turns: [
          {
            match: { lastUser: "long" },
            toolCalls: [
              {
                name: "mcp__everything__trigger-long-running-operation",
                input: { duration: 600, steps: 600 },
              },
            ],
          },
          { repeat: true, text: "done" },
        ],
      },
      { mcpServers: { everything: { url } } },
    );
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const events: ServerEvent[] = [];
    for await (const e of chat.message("long")) {
      events.push(e);
      if (e.event?.$case === "toolResultStart") {
        // Once the call reached the server (its answer streams as server-sent events), it dies.
        await sleep(1000);
        await stopHttpServer();
      }
    }
    chat.close();
    const result = toolResult(events, startedCalls(events)[0]!);
    expect(result.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(result.text).toMatch(/^MCP server everything is not available: /);
  });

  it("a Streamable HTTP server restarted between two calls: the next call runs, on a new session", async () => {
    const port = await freePort();
    const url = await startHttpServer(port);
    h = await startHarness(SCRIPT, { mcpServers: { everything: { url } } });
    const first = await run("echo");
    expect(toolResult(first, startedCalls(first)[0]!).text).toBe("Echo: hello MCP");

    // The new process does not know the session Parkway holds.
    await stopHttpServer();
    await startHttpServer(port);
    const next = await run("echo");
    expect(toolResult(next, startedCalls(next)[0]!)).toEqual({
      state: ToolResultState.TOOL_RESULT_STATE_SUCCESS,
      text: "Echo: hello MCP",
    });
  });

  it("a server that is not there at start does not stop Parkway; its tools come when it does", async () => {
    const port = await freePort();
    h = await startHarness(SCRIPT, {
      mcpServers: {
        everything: { url: `http://127.0.0.1:${port}/mcp` },
        missing: { command: "/nonexistent/mcp-server" },
      },
    });
    const toolNames = async () => (await h!.client.listAgents())[0]!.tools.map((t) => t.name);
    expect((await toolNames()).filter((n) => n.startsWith("mcp__"))).toEqual([]);
    const warned = h.log.entries.filter((e) => e.msg === "MCP server not available");
    expect(warned.map((e) => (e.obj as { mcpServer?: string }).mcpServer).sort()).toEqual([
      "everything",
      "missing",
    ]);

    await startHttpServer(port);
    // Reconnection is retried with backoff; wait (bounded) for the tools to appear.
    for (let i = 0; i < 400 && !(await toolNames()).includes("mcp__everything__echo"); i++) {
      await sleep(100);
    }
    expect(await toolNames()).toContain("mcp__everything__echo");
    const echo = await run("echo");
    expect(toolResult(echo, startedCalls(echo)[0]!).text).toBe("Echo: hello MCP");
  }, 60_000);
});
