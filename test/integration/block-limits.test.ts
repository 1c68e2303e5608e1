import { afterEach, describe, expect, it } from "vitest";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import {
  collect,
  type Harness,
  kind,
  startedCalls,
  startHarness,
  toolResult,
} from "../helpers/parkway-harness.js";

/**
 * A model's output is bounded per block (`agents[].maxBlockBytes`): text past it is cut with a
 * marker every client and the model see; a tool call's input past it is dropped and the call fails
 * with an error the model reads, so nothing is stored or sent that a default client cannot
 * receive. Here the limit is 4 KiB and the model sends 64 KiB.
 */
const LIMIT = 4096;
const BIG = 64 * 1024;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const deltaText = (events: Awaited<ReturnType<typeof collect>>): string =>
  events.map((e) => (e.event?.$case === "textBlockDelta" ? e.event.value.delta : "")).join("");

describe("block limits", () => {
  it("cuts a text block past maxBlockBytes with a marker, and the model sees the same text", async () => {
    h = await startHarness(
      { turns: [{ text: "x".repeat(BIG), chunkSize: 1000 }, { text: "done" }] },
      { maxBlockBytes: LIMIT },
    );
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const events = await collect(chat.message("talk"));
    const text = deltaText(events);
    expect(text.startsWith("x".repeat(LIMIT))).toBe(true);
    expect(text).toContain(`[truncated: this block passed ${LIMIT} bytes`);
    expect(Buffer.byteLength(text)).toBeLessThan(LIMIT + 200);
    expect(kind(events.at(-1)!)).toBe("reply_end");

    // A replay from the store carries the cut text, not the model's 64 KiB.
    chat.close();
    const again = await h.client.attach(session.id, { afterSeq: 0 });
    const replayed: typeof events = [];
    for await (const event of again) {
      replayed.push(event);
      if (event.seq >= events.at(-1)!.seq) break;
    }
    again.close();
    expect(deltaText(replayed)).toBe(text);

    // The next model call gets the cut text as the assistant's message (attached after the stored
    // events, so that the first reply's replayed end does not end the second).
    const { lastSeq } = await h.client.getSession(session.id);
    await collect((await h.client.attach(session.id, { afterSeq: lastSeq })).message("again"));
    const assistant = h.model.requests[1]?.messages.find((m) => m.role === "assistant");
    expect(JSON.stringify(assistant)).toContain("[truncated: this block passed");
    expect(JSON.stringify(h.model.requests[1]).length).toBeLessThan(LIMIT * 4);
  });

  it("drops a tool call's input past maxBlockBytes: the call fails with an error the model reads, and nothing parks", async () => {
    const questions = [
      {
        question: "q".repeat(BIG),
        header: "Big",
        options: [{ label: "a" }, { label: "b" }],
      },
    ];
    h = await startHarness(
      {
        turns: [
          { toolCalls: [{ id: "call_big", name: "AskUser", input: { questions } }] },
          { text: "understood" },
        ],
      },
      { maxBlockBytes: LIMIT },
    );
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const events = await collect(chat.message("ask me"));
    chat.close();
    expect(events.some((e) => kind(e) === "require_user_confirm")).toBe(false);
    expect(events.some((e) => kind(e) === "reply_parked")).toBe(false);
    const result = toolResult(events, startedCalls(events)[0]!);
    expect(result.state).toBe(ToolResultState.TOOL_RESULT_STATE_ERROR);
    expect(result.text).toMatch(/over the agent's maxBlockBytes \(4096\); it was not kept/);
    // At most the limit of the input was streamed before it was dropped; its end carries none.
    const streamed = events
      .map((e) => (e.event?.$case === "toolCallDelta" ? e.event.value.delta : ""))
      .join("");
    expect(Buffer.byteLength(streamed)).toBeLessThanOrEqual(LIMIT);
    const end = events.find((e) => e.event?.$case === "toolCallEnd");
    expect(end?.event?.$case === "toolCallEnd" && end.event.value.input).toBe("");
    expect(events.every((e) => JSON.stringify(e).length < LIMIT)).toBe(true);
    const stored = await h.client.getSession(session.id);
    expect(JSON.stringify(stored).length).toBeLessThan(LIMIT * 4);
    const told = h.model.requests[1]?.messages.find((m) => m.role === "tool");
    expect(told?.content).toMatch(/it was not kept/);
  });

  it("refuses a maxBlockBytes past what clients can receive, naming the field", async () => {
    await expect(startHarness({ turns: [] }, { maxBlockBytes: 8 * 1024 * 1024 })).rejects.toThrow(
      /maxBlockBytes/,
    );
  });
});
