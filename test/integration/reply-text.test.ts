import { afterEach, describe, expect, it } from "vitest";
import { collect, type Harness, kind, shape, startHarness } from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("a plain text reply", () => {
  it("streams the exact event sequence from REPLY_START to REPLY_END(completed)", async () => {
    h = await startHarness({ turns: [{ text: "Hello from the scripted model.", chunkSize: 5 }] });
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const events = await collect(chat.message("hi"));
    chat.close();

    expect(shape(events)).toEqual([
      "reply_start",
      "model_call_start",
      "text_block_start",
      "text_block_delta",
      "text_block_end",
      "model_call_end",
      "reply_end",
    ]);
    const deltas = events.filter((e) => kind(e) === "text_block_delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(
      deltas.map((e) => (e.event?.$case === "textBlockDelta" ? e.event.value.delta : "")).join(""),
    ).toBe("Hello from the scripted model.");
    // seq is strictly increasing and gap-free from 1; every event carries the reply id.
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const replyId = events[0]!.replyId;
    expect(replyId).not.toBe("");
    expect(events.every((e) => e.replyId === replyId)).toBe(true);
    const end = events[events.length - 1]!;
    expect(end.event?.$case === "replyEnd" && end.event.value.finishedReason).toBe(1);

    const after = await h.client.getSession(session.id);
    expect(after.status).toBe(1); // IDLE
    expect(after.lastSeq).toBe(events.length);
    expect(h.model.requests[0]?.messages.at(-1)).toMatchObject({ role: "user", content: "hi" });
  });

  it("streams thinking before text, each as its own block", async () => {
    h = await startHarness({ turns: [{ thinking: "Let me think.", text: "Answer." }] });
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const events = await collect(chat.message("why?"));
    chat.close();
    expect(shape(events)).toEqual([
      "reply_start",
      "model_call_start",
      "thinking_block_start",
      "thinking_block_delta",
      "thinking_block_end",
      "text_block_start",
      "text_block_delta",
      "text_block_end",
      "model_call_end",
      "reply_end",
    ]);
    const thinking = events
      .map((e) => (e.event?.$case === "thinkingBlockDelta" ? e.event.value.delta : ""))
      .join("");
    expect(thinking).toBe("Let me think.");
  });

  it("answers the unary Reply with the final message", async () => {
    h = await startHarness({ turns: [{ text: "Unary answer." }] });
    const session = await h.client.createSession({ agentId: "test" });
    const res = await h.client.reply({
      sessionId: session.id,
      input: { $case: "userMessage", value: { text: "hello", content: [] } },
    });
    expect(res.message?.finishedReason).toBe(1);
    const text = res.message?.content
      .map((b) => (b.block?.$case === "text" ? b.block.value.text : ""))
      .join("");
    expect(text).toBe("Unary answer.");
    expect(res.pendingToolCalls).toEqual([]);
  });
});
