import { describe, expect, it } from "vitest";
import { blockBytes, messageBytes, ReplyBudget } from "../../src/agent/reply-budget.js";
import type { Block, Msg, ToolCallBlock } from "../../src/agent/types.js";
import { MAX_REPLY_BYTES } from "../../src/common/message-size.js";
import { ReplyResponse } from "../../src/generated/parkway/v1/agent_service.js";
import { Msg as PbMsg } from "../../src/generated/parkway/v1/content.js";
import { msgToPb, toolCallToPb } from "../../src/server/mappers/content.js";
import { waitingNotice } from "../../src/session/waiting-notice.js";

/**
 * The reply budget counts a message as clients receive it: its count is never less than the
 * message's protobuf encoding, whatever the blocks hold, so a message within maxReplyBytes is a
 * message every client can receive.
 */
const msg = (content: Block[]): Msg => ({
  id: "reply_1",
  role: "assistant",
  name: "agent",
  content,
  createdAt: new Date(0).toISOString(),
});
const encoded = (message: Msg): number => PbMsg.encode(msgToPb(message)).finish().length;

const question = "Which one, é or ü? ".repeat(2000);
const askInput = JSON.stringify({
  questions: [
    {
      question,
      header: "Pick",
      options: [
        { label: "é", description: "the first", preview: "p".repeat(500) },
        { label: "ü", description: "the second" },
      ],
    },
  ],
});
const rule = { toolName: "Bash", ruleContent: "npm test:*", behavior: "allow" as const };
const blocks: Record<string, Block> = {
  text: { type: "text", id: "blk_1", text: "ж".repeat(10_000) },
  thinking: { type: "thinking", id: "blk_2", thinking: "🙂".repeat(5000) },
  bash: {
    type: "tool_call",
    id: "call_1",
    name: "Bash",
    input: JSON.stringify({ command: "npm test " + "x".repeat(20_000) }),
    state: "asking",
    suggestedRules: [rule, rule],
    decision: {
      behavior: "ask",
      reason: "r".repeat(3000),
      check: "mode",
      bypassImmune: false,
      suggestedRules: [rule],
    },
    expiresAt: new Date(0).toISOString(),
  },
  ask: { type: "tool_call", id: "call_2", name: "AskUser", input: askInput, state: "submitted" },
  answered: {
    type: "tool_result",
    id: "call_2",
    name: "AskUser",
    output: `${question} → é`,
    state: "success",
    metadata: { answers: [{ question, selected: ["é"], other: "o".repeat(3000) }] },
  },
  numbers: {
    type: "tool_result",
    id: "call_3",
    name: "Ticket",
    output: "done",
    state: "success",
    // A Struct holds small numbers in far more bytes than their JSON.
    metadata: { xs: Array.from({ length: 20_000 }, (_, i) => i % 10), nested: { a: [null, true] } },
  },
};

describe("reply budget", () => {
  for (const [name, block] of Object.entries(blocks)) {
    it(`counts a ${name} block at least at its encoded size`, () => {
      expect(blockBytes(block)).toBeGreaterThanOrEqual(encoded(msg([block])) - 64);
    });
  }

  it("counts a whole message at least at its encoded size", () => {
    const message = msg(Object.values(blocks));
    expect(messageBytes(message)).toBeGreaterThanOrEqual(encoded(message));
  });

  it("keeps room for an AskUser's answer (options picked) until it comes", () => {
    const ask = blocks.ask as ToolCallBlock;
    const answer: Block = {
      type: "tool_result",
      id: ask.id,
      name: "AskUser",
      output: `${question} → é`,
      state: "success",
      metadata: { answers: [{ question, selected: ["é"] }] },
    };
    const answered = msg([{ ...ask, state: "finished" }, answer]);
    expect(messageBytes(msg([ask]))).toBeGreaterThanOrEqual(messageBytes(answered));
    expect(messageBytes(answered)).toBeGreaterThanOrEqual(encoded(answered));
  });

  it("keeps Reply's response for a parked reply at the largest maxReplyBytes under 4 MiB", () => {
    // Waiting calls filling the budget (calls counted once, the worst case): Reply sends them in
    // the notice and in pending_tool_calls.
    const calls: ToolCallBlock[] = [];
    const budget = new ReplyBudget(MAX_REPLY_BYTES, 0);
    for (let i = 0; ; i++) {
      const call: ToolCallBlock = {
        type: "tool_call",
        id: `call_${i}`,
        name: "Ticket",
        input: JSON.stringify({ body: "b".repeat(100_000) }),
        state: "submitted",
      };
      if (!budget.charge(blockBytes(call))) break;
      calls.push(call);
    }
    const notice = waitingNotice(msg(calls), calls);
    const response = ReplyResponse.encode({
      message: msgToPb(notice),
      pendingToolCalls: calls.map(toolCallToPb),
      status: 0,
    }).finish().length;
    expect(response).toBeGreaterThan(MAX_REPLY_BYTES * 1.9);
    expect(response).toBeLessThan(4 * 1024 * 1024);
  });

  it("cuts a delta at a character boundary and keeps nothing after", () => {
    const budget = new ReplyBudget(10, 4);
    expect(budget.take("ab")).toBe("ab");
    expect(budget.take("ééé")).toBe("éé");
    expect(budget.over).toBe(true);
    expect(budget.take("x")).toBe("");
    expect(budget.remaining).toBe(0);
  });
});
