import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ModelStreamEvent } from "../../../src/model/model.js";
import { runReply } from "../../../src/agent/reply-loop.js";
import { respond, type Turn } from "../session/core.js";
import { callOf, harness, ofType, resultOf, typesOf } from "./harness.js";

/** A text answer streamed in pieces, with the usage the provider reports. */
const pieces = (parts: string[], outputTokens: number): Turn =>
  async function* () {
    await Promise.resolve();
    for (const delta of parts) yield { type: "text_delta", delta } satisfies ModelStreamEvent;
    yield {
      type: "usage",
      usage: { inputTokens: 10, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0 },
    };
    yield { type: "done", finishReason: "stop" };
  };

describe("runReply: the model loop", () => {
  it("finishes a text-only answer COMPLETED, streams its deltas, and emits no REPLY_END", async () => {
    const h = await harness([pieces(["Hel", "lo ", "there."], 3)]);
    try {
      const outcome = await runReply(h.env);

      expect(outcome).toEqual({ kind: "finished", finishedReason: "completed" });
      expect(typesOf(h.events)).toEqual([
        "model_call_start",
        "text_block_start",
        "text_block_delta",
        "text_block_delta",
        "text_block_delta",
        "text_block_end",
        "model_call_end",
      ]);
      // REPLY_START and REPLY_END belong to the session.
      expect(typesOf(h.events)).not.toContain("reply_end");
      expect(typesOf(h.events)).not.toContain("reply_start");
      expect(ofType(h.events, "model_call_start")[0]?.modelName).toBe("fake");
      expect(ofType(h.events, "text_block_delta").map((e) => e.delta)).toEqual([
        "Hel",
        "lo ",
        "there.",
      ]);
      expect(ofType(h.events, "model_call_end")[0]).toMatchObject({
        finishedReason: "completed",
        usage: { inputTokens: 10, outputTokens: 3 },
      });

      // The message holds one text block with the whole answer; the deltas name it.
      const [block] = h.env.message.content;
      expect(h.env.message.content).toHaveLength(1);
      expect(block).toMatchObject({ type: "text", text: "Hello there." });
      expect(ofType(h.events, "text_block_start")[0]?.blockId).toBe(block?.id);
      expect(h.env.message.finishedReason).toBe("completed");
      expect(h.env.message.error).toBeUndefined();
      expect(h.env.message.usage).toEqual({
        inputTokens: 10,
        outputTokens: 3,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      });
      expect(h.env.progress.iteration).toBe(1);

      // The model was asked once, with the system prompt, the history and every tool.
      expect(h.model.requests).toHaveLength(1);
      expect(h.model.requests[0]?.messages).toEqual([
        { role: "system", content: "You are a test agent." },
        { role: "user", content: "please help" },
      ]);
      expect(h.model.requests[0]?.tools.map((t) => t.name).sort()).toEqual([
        "AskUser",
        "Deploy",
        "Read",
        "Write",
      ]);
      expect(h.decisions).toEqual([]);
    } finally {
      await h.cleanup();
    }
  });

  it("runs an allowed read-only call, sends its result to the model, and calls the model again", async () => {
    const h = await harness(
      [
        respond("Let me look.", [{ id: "m1", name: "Read", input: { file_path: "notes.txt" } }]),
        pieces(["It says hello."], 4),
      ],
      { files: { "notes.txt": "hello from the file\n" } },
    );
    try {
      const outcome = await runReply(h.env);

      expect(outcome).toEqual({ kind: "finished", finishedReason: "completed" });
      expect(h.env.progress.iteration).toBe(2);
      expect(h.model.requests).toHaveLength(2);

      // Default mode: Read only reads, so the engine allowed it on its own.
      expect(h.decisions).toHaveLength(1);
      expect(h.decisions[0]).toMatchObject({
        name: "Read",
        decision: { behavior: "allow", check: "read_only" },
      });
      const call = callOf(h.env.message, "m1");
      expect(call.state).toBe("finished");
      expect(call.id).not.toBe("m1"); // the server names the call; the model's id is kept aside
      const result = resultOf(h.env.message, "m1");
      expect(result).toMatchObject({ name: "Read", state: "success" });
      expect(result?.output).toContain("hello from the file");

      const types = typesOf(h.events);
      expect(types).toEqual([
        "model_call_start",
        "text_block_start",
        "text_block_delta",
        "text_block_end",
        "tool_call_start",
        "tool_call_delta",
        "tool_call_end",
        "model_call_end",
        "tool_result_start",
        "tool_result_text_delta",
        "tool_result_end",
        "model_call_start",
        "text_block_start",
        "text_block_delta",
        "text_block_end",
        "model_call_end",
      ]);
      expect(ofType(h.events, "tool_call_start")[0]).toMatchObject({
        toolCallId: call.id,
        toolCallName: "Read",
        modelId: "m1",
      });
      expect(ofType(h.events, "tool_result_end")[0]).toMatchObject({
        toolCallId: call.id,
        state: "success",
      });
      const streamed = ofType(h.events, "tool_result_text_delta").map((e) => e.delta);
      expect(streamed.join("")).toBe(result?.output);
      // The decision was told before the first event showing it.
      expect(h.decisions[0]!.eventsBefore).toBeLessThanOrEqual(types.indexOf("tool_result_start"));

      // The second request carries the call and its result under the model's own id.
      expect(h.model.requests[1]?.messages.slice(2)).toEqual([
        {
          role: "assistant",
          content: "Let me look.",
          toolCalls: [
            { id: "m1", name: "Read", input: JSON.stringify({ file_path: "notes.txt" }) },
          ],
        },
        { role: "tool", toolCallId: "m1", content: result?.output },
      ]);
      expect(h.env.message.content.map((b) => b.type)).toEqual([
        "text",
        "tool_call",
        "tool_result",
        "text",
      ]);
      expect(h.env.message.usage?.outputTokens).toBe(4);
    } finally {
      await h.cleanup();
    }
  });

  it("names each call itself when the model reuses its ids from turn to turn", async () => {
    const read = { id: "call_0", name: "Read", input: { file_path: "a.txt" } };
    const again = { ...read, input: { file_path: "b.txt" } };
    const h = await harness([respond("", [read]), respond("", [again]), respond("Both read.")], {
      files: { "a.txt": "alpha", "b.txt": "beta" },
    });
    try {
      expect(await runReply(h.env)).toEqual({ kind: "finished", finishedReason: "completed" });

      const calls = h.env.message.content.filter((b) => b.type === "tool_call");
      expect(calls.map((c) => c.modelId)).toEqual(["call_0", "call_0"]);
      expect(new Set(calls.map((c) => c.id)).size).toBe(2);
      // Each turn reads back with the model's id, and each result follows its own call.
      const sent = h.model.requests[2]!.messages.slice(2);
      expect(sent.map((m) => m.role)).toEqual(["assistant", "tool", "assistant", "tool"]);
      expect(sent[1]).toMatchObject({ toolCallId: "call_0" });
      expect(sent[1]?.role === "tool" && sent[1].content).toContain("alpha");
      expect(sent[3]?.role === "tool" && sent[3].content).toContain("beta");
    } finally {
      await h.cleanup();
    }
  });

  it("runs a call that only an allow rule allows, and the model reads what it did", async () => {
    const write = { file_path: "out.txt", content: "written" };
    const h = await harness(
      [respond("", [{ id: "w1", name: "Write", input: write }]), respond("Done.")],
      { rules: [{ toolName: "Write", behavior: "allow", source: "config" }] },
    );
    try {
      const outcome = await runReply(h.env);

      expect(outcome).toEqual({ kind: "finished", finishedReason: "completed" });
      expect(h.decisions.map((d) => [d.name, d.decision.behavior, d.decision.check])).toEqual([
        ["Write", "allow", "rule.allow"],
      ]);
      expect(h.decisions[0]?.decision.rule).toMatchObject({ toolName: "Write", behavior: "allow" });
      expect(await readFile(path.join(h.work, "out.txt"), "utf8")).toBe("written");
      expect(resultOf(h.env.message, "w1")).toMatchObject({ state: "success" });
      expect(typesOf(h.events)).not.toContain("require_user_confirm");
      const tool = h.model.requests[1]?.messages.find((m) => m.role === "tool");
      expect(tool).toMatchObject({ role: "tool", toolCallId: "w1" });
      expect(tool?.role === "tool" && tool.content).toContain("out.txt");
    } finally {
      await h.cleanup();
    }
  });
});
