import { describe, expect, it } from "vitest";
import type { EventBody } from "../../src/agent/events.js";
import type { Msg } from "../../src/agent/types.js";
import { foldEvents } from "../../src/session/fold-events.js";

const base = (): Msg => ({
  id: "reply_1",
  role: "assistant",
  name: "test",
  content: [{ type: "text", id: "b0", text: "Before the checkpoint." }],
  createdAt: "2026-01-01T00:00:00.000Z",
});

describe("foldEvents", () => {
  it("rebuilds blocks, calls and results logged after a checkpoint", () => {
    const events: EventBody[] = [
      { type: "model_call_start", modelName: "m" },
      { type: "thinking_block_start", blockId: "t1" },
      { type: "thinking_block_delta", blockId: "t1", delta: "hm" },
      { type: "text_block_start", blockId: "b1" },
      { type: "text_block_delta", blockId: "b1", delta: "Let me " },
      { type: "text_block_delta", blockId: "b1", delta: "look." },
      { type: "tool_call_start", toolCallId: "c1", toolCallName: "Read", modelId: "call_0" },
      { type: "tool_call_delta", toolCallId: "c1", delta: '{"file_path":' },
      { type: "tool_call_start", toolCallId: "c2", toolCallName: "Bash" },
      { type: "tool_call_end", toolCallId: "c1", input: '{"file_path":"/a"}' },
      { type: "tool_call_end", toolCallId: "c2", input: '{"command":"ls"}' },
      {
        type: "model_call_end",
        usage: { inputTokens: 5, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0 },
        finishedReason: "completed",
      },
      { type: "tool_result_start", toolCallId: "c1", toolCallName: "Read" },
      { type: "tool_result_text_delta", toolCallId: "c1", delta: "1\tcontent" },
      { type: "tool_result_end", toolCallId: "c1", state: "success", metadata: { lines: 1 } },
      { type: "tool_result_start", toolCallId: "c2", toolCallName: "Bash" },
      { type: "tool_result_text_delta", toolCallId: "c2", delta: "partial out" },
    ];
    const message = foldEvents(base(), events);
    expect(message.content.map((b) => `${b.type}:${b.id}`)).toEqual([
      "text:b0",
      "thinking:t1",
      "text:b1",
      "tool_call:c1",
      "tool_call:c2",
      "tool_result:c1",
    ]);
    const text = message.content.find((b) => b.id === "b1");
    expect(text?.type === "text" && text.text).toBe("Let me look.");
    const c1 = message.content.find((b) => b.type === "tool_call" && b.id === "c1");
    expect(c1).toMatchObject({
      input: '{"file_path":"/a"}',
      state: "finished",
      resultStarted: true,
      modelId: "call_0",
    });
    const c2 = message.content.find((b) => b.type === "tool_call" && b.id === "c2");
    expect(c2).toMatchObject({ state: "pending", resultStarted: true });
    expect(c2).not.toHaveProperty("modelId");
    const r1 = message.content.find((b) => b.type === "tool_result");
    expect(r1).toMatchObject({ output: "1\tcontent", state: "success", metadata: { lines: 1 } });
    expect(message.usage?.outputTokens).toBe(7);
  });

  it("applies the call states REQUIRE_* events announce and leaves the checkpoint untouched", () => {
    const checkpoint = base();
    checkpoint.content.push({
      type: "tool_call",
      id: "c1",
      name: "Deploy",
      input: "{}",
      state: "pending",
    });
    const message = foldEvents(checkpoint, [
      {
        type: "require_user_confirm",
        toolCalls: [{ type: "tool_call", id: "c1", name: "Deploy", input: "{}", state: "asking" }],
      },
    ]);
    expect(message.content[1]).toMatchObject({ id: "c1", state: "asking" });
    expect(checkpoint.content[1]).toMatchObject({ state: "pending" });
  });
});
