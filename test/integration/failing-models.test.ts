import { existsSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { ParkwaySession } from "../../src/client/index.js";
import { FinishedReason, ToolResultState } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import type { Script } from "../../src/model/scripted/index.js";
import { startScriptedModel, type ScriptedModelServer } from "../../src/model/scripted/index.js";
import {
  collect,
  type Harness,
  startedCalls,
  startHarness,
  toolResult,
} from "../helpers/parkway-harness.js";

let h: Harness | undefined;
let revived: ScriptedModelServer | undefined;
afterEach(async () => {
  await h?.close();
  await revived?.close();
  h = undefined;
  revived = undefined;
});

function replyEnd(events: ServerEvent[]) {
  const last = events[events.length - 1];
  return last?.event?.$case === "replyEnd" ? last.event.value : undefined;
}

/** A script whose "first" turn is `failing` and whose "second" turn answers "working again". */
function failingThenFine(failing: Script["turns"][number]): Script {
  return {
    turns: [
      { match: { lastUser: "first" }, ...failing },
      { match: { lastUser: "second" }, text: "working again" },
    ],
  };
}

async function open(): Promise<ParkwaySession> {
  const session = await h!.client.createSession({ agentId: "test" });
  return h!.client.attach(session.id);
}

/** The next message in the same session completes: the failure left the session usable. */
async function expectUsable(chat: ParkwaySession): Promise<void> {
  const events = await collect(chat.message("second"));
  chat.close();
  expect(replyEnd(events)?.finishedReason).toBe(FinishedReason.FINISHED_REASON_COMPLETED);
  const text = events
    .map((e) => (e.event?.$case === "textBlockDelta" ? e.event.value.delta : ""))
    .join("");
  expect(text).toBe("working again");
}

/** Sends "first" and expects REPLY_END(error) with `code` and a message matching `message`. */
async function expectFailure(chat: ParkwaySession, code: string, message: RegExp) {
  const events = await collect(chat.message("first"));
  const end = replyEnd(events);
  expect(end?.finishedReason).toBe(FinishedReason.FINISHED_REASON_ERROR);
  expect(end?.error?.code).toBe(code);
  expect(end?.error?.message).toMatch(message);
  // The server's log says it too, with the session, the reply and the endpoint.
  const logged = h!.log.entries.filter((e) => e.msg === "model call failed").at(-1);
  expect(logged?.level).toBe("warn");
  expect(logged?.obj).toMatchObject({
    session: events[0]?.sessionId,
    reply: events[0]?.replyId,
    agent: "test",
    endpoint: h!.model.url,
    code,
  });
  expect((logged?.obj as { error?: string } | undefined)?.error).toMatch(message);
  return events;
}

describe("a failing model endpoint", () => {
  it("down (connection refused): REPLY_END(error) says it is unreachable; it works once back", async () => {
    const script = failingThenFine({ text: "unused" });
    h = await startHarness(script, {}, { model: { maxRetries: 0 } });
    const listen = new URL(h.model.url).host;
    await h.model.close();
    const chat = await open();
    await expectFailure(chat, "model_unavailable", /unreachable/);
    revived = await startScriptedModel({ script, listen });
    await expectUsable(chat);
  });

  it("429 once: the request is retried and the reply completes", async () => {
    h = await startHarness({
      turns: [{ text: "after the wait", fail: { status: 429, times: 1, retryAfterMs: 10 } }],
    });
    const events = await collect((await open()).message("hello"));
    expect(replyEnd(events)?.finishedReason).toBe(FinishedReason.FINISHED_REASON_COMPLETED);
    expect(h.model.requests).toHaveLength(2);
  });

  it("429 always: REPLY_END(error) names the status once the retries are spent", async () => {
    h = await startHarness(
      failingThenFine({ text: "x", fail: { status: 429, message: "slow down", retryAfterMs: 10 } }),
    );
    const chat = await open();
    await expectFailure(chat, "model_status", /429.*slow down/);
    expect(h.model.requests).toHaveLength(3); // two retries (model.maxRetries defaults to 2)
    await expectUsable(chat);
  });

  it("5xx twice then success: the reply completes", async () => {
    h = await startHarness({
      turns: [{ text: "recovered", fail: { status: 500, times: 2, retryAfterMs: 10 } }],
    });
    const events = await collect((await open()).message("hello"));
    expect(replyEnd(events)?.finishedReason).toBe(FinishedReason.FINISHED_REASON_COMPLETED);
    expect(h.model.requests).toHaveLength(3);
  });

  it("5xx always: REPLY_END(error) names the status; the failed reply stays in the history", async () => {
    h = await startHarness(failingThenFine({ text: "x", fail: { status: 503, retryAfterMs: 10 } }));
    const chat = await open();
    await expectFailure(chat, "model_status", /503/);
    expect(h.model.requests).toHaveLength(3);
    await expectUsable(chat);
    const last = h.model.requests[h.model.requests.length - 1]!;
    expect(last.messages.filter((m) => m.role === "user")).toHaveLength(2);
  });

  it("stalls after the headers: REPLY_END(error) says nothing came within model.timeout", async () => {
    h = await startHarness(
      failingThenFine({ text: "x", fail: { stall: true } }),
      {},
      { model: { timeout: 300, maxRetries: 0 } },
    );
    const chat = await open();
    await expectFailure(chat, "model_timeout", /sent nothing for 300 ms \(model\.timeout\)/);
    await expectUsable(chat);
  });

  it("cuts the stream mid-way: REPLY_END(error) says the stream failed", async () => {
    h = await startHarness(
      failingThenFine({ text: "a long answer", chunkSize: 2, fail: { cutAfterChunks: 3 } }),
    );
    const chat = await open();
    await expectFailure(chat, "model_stream", /stream failed/);
    expect(existsSync(h.dataDir)).toBe(true);
    await expectUsable(chat);
  });
});

describe("a model that calls tools wrongly", () => {
  it("gets error results for malformed JSON and an unknown tool, recovers, and completes", async () => {
    h = await startHarness(
      {
        turns: [
          {
            match: { lastUser: "first" },
            toolCalls: [
              { id: "call_json", name: "Read", input: '{"file_path": "a.txt"' },
              { id: "call_unknown", name: "Teleport", input: { to: "mars" } },
            ],
          },
          { match: { lastToolResult: "." }, text: "sorry, my mistake" },
          { match: { lastUser: "second" }, text: "working again" },
        ],
      },
      { permissionMode: "bypass" },
    );
    const chat = await open();
    const events = await collect(chat.message("first"));
    expect(replyEnd(events)?.finishedReason).toBe(FinishedReason.FINISHED_REASON_COMPLETED);
    const [jsonId, unknownId] = startedCalls(events);
    const json = toolResult(events, jsonId!);
    expect(json.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(json.text).toMatch(/^the input is not valid JSON: /);
    const unknown = toolResult(events, unknownId!);
    expect(unknown.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(unknown.text).toMatch(/^unknown tool "Teleport"; the tools are: Bash, Read, /);
    // The model saw both errors on its next turn.
    const tools = h.model.requests[1]!.messages.filter((m) => m.role === "tool");
    expect(tools.map((m) => m.content)).toEqual([json.text, unknown.text]);
    await expectUsable(chat);
  });
});
