import { describe, expect, it } from "vitest";
import { runReply } from "../../../src/agent/reply-loop.js";
import { ModelError } from "../../../src/model/model.js";
import { respond, type Turn } from "../session/core.js";
import { harness, ofType, resultOf, typesOf } from "./harness.js";

/** A model call that streams `before` and then fails with `error`. */
const failing = (error: Error, before: "nothing" | "text and a call" = "nothing"): Turn =>
  async function* () {
    await Promise.resolve();
    if (before === "text and a call") {
      yield { type: "text_delta", delta: "Let me " };
      yield { type: "tool_call_start", index: 0, id: "r9", name: "Read" };
      yield { type: "tool_call_delta", index: 0, delta: '{"file_pa' };
      yield {
        type: "usage",
        usage: { inputTokens: 7, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
      };
    }
    throw error;
  };

describe("runReply: a model failure", () => {
  it("ends ERROR with the ModelError's code and message", async () => {
    const h = await harness([failing(new ModelError("the provider answered 503", "model_status"))]);
    try {
      const outcome = await runReply(h.env);

      expect(outcome).toEqual({
        kind: "finished",
        finishedReason: "error",
        error: { code: "model_status", message: "the provider answered 503" },
      });
      expect(typesOf(h.events)).toEqual(["model_call_start", "model_call_end"]);
      expect(ofType(h.events, "model_call_end")[0]?.finishedReason).toBe("error");
      expect(h.env.message.finishedReason).toBe("error");
      expect(h.env.message.error).toEqual(outcome.kind === "finished" && outcome.error);
      expect(h.model.requests).toHaveLength(1);
    } finally {
      await h.cleanup();
    }
  });

  it("gives any other failure the code model_failed", async () => {
    const h = await harness([failing(new Error("socket hang up"))]);
    try {
      const outcome = await runReply(h.env);

      expect(outcome.kind === "finished" && outcome.error).toEqual({
        code: "model_failed",
        message: "the model call failed: socket hang up",
      });
      // The session logs every failure whose code starts with model_ as a model failure.
      expect(outcome.kind === "finished" && outcome.error?.code.startsWith("model_")).toBe(true);
    } finally {
      await h.cleanup();
    }
  });

  it("fails when the model throws before streaming (no turn left)", async () => {
    const h = await harness([]);
    try {
      const outcome = await runReply(h.env);
      expect(outcome).toMatchObject({ kind: "finished", finishedReason: "error" });
      expect(outcome.kind === "finished" && outcome.error?.code).toBe("model_failed");
      expect(typesOf(h.events)).toEqual(["model_call_start", "model_call_end"]);
    } finally {
      await h.cleanup();
    }
  });

  it("keeps the text streamed before the failure, drops the incomplete call, runs nothing", async () => {
    const h = await harness([
      failing(new ModelError("stream broke", "model_stream"), "text and a call"),
    ]);
    try {
      const outcome = await runReply(h.env);

      expect(outcome).toMatchObject({
        kind: "finished",
        finishedReason: "error",
        error: { code: "model_stream" },
      });
      expect(h.env.message.content).toEqual([
        { type: "text", id: expect.any(String) as unknown, text: "Let me " },
      ]);
      expect(h.env.message.usage).toMatchObject({ inputTokens: 7, outputTokens: 2 });
      const types = typesOf(h.events);
      expect(types).toEqual([
        "model_call_start",
        "text_block_start",
        "text_block_delta",
        "text_block_end",
        "tool_call_start",
        "tool_call_delta",
        "model_call_end",
      ]);
      // The call the clients saw start gets no TOOL_CALL_END and no result.
      expect(types).not.toContain("tool_call_end");
      expect(types).not.toContain("tool_result_start");
      expect(h.decisions).toEqual([]);
    } finally {
      await h.cleanup();
    }
  });

  it("keeps the results of earlier iterations when a later model call fails", async () => {
    const h = await harness(
      [
        respond("", [{ id: "r1", name: "Read", input: { file_path: "a.txt" } }]),
        failing(new ModelError("timed out", "model_timeout")),
      ],
      { files: { "a.txt": "alpha" } },
    );
    try {
      const outcome = await runReply(h.env);

      expect(outcome).toMatchObject({ finishedReason: "error", error: { code: "model_timeout" } });
      expect(resultOf(h.env.message, "r1")?.state).toBe("success");
      expect(h.env.progress.iteration).toBe(2);
      expect(ofType(h.events, "model_call_end").map((e) => e.finishedReason)).toEqual([
        "completed",
        "error",
      ]);
    } finally {
      await h.cleanup();
    }
  });
});
