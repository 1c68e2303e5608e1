import { describe, expect, it } from "vitest";
import { z } from "zod";
import { interruptCalls, runReply } from "../../../src/agent/reply-loop.js";
import { INTERRUPTED_TEXT, InterruptReason } from "../../../src/agent/tool-runner.js";
import { defineTool } from "../../../src/tools/define-tool.js";
import { hang, respond, type Turn } from "../session/core.js";
import { callOf, harness, ofType, resultOf, typesOf } from "./harness.js";

/** Rejects with the signal's reason once it aborts, as a model stream does. */
const aborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) =>
    signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true }),
  );

/** Streams some text and a whole tool call, then waits (still generating) until aborted. */
const callThenHang: Turn = async function* (request) {
  yield { type: "text_delta", delta: "Reading." };
  yield { type: "tool_call_start", index: 0, id: "r1", name: "Read" };
  yield { type: "tool_call_delta", index: 0, delta: JSON.stringify({ file_path: "a.txt" }) };
  await aborted(request.signal);
};

/** A read-only tool that runs until released or until its signal aborts. */
function slowTool() {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const tool = defineTool({
    name: "Slow",
    description: "Waits.",
    input: z.strictObject({}),
    readOnly: true,
    run: async (_input, ctx) => {
      await Promise.race([released, aborted(ctx.signal).catch(() => undefined)]);
      return ctx.signal.aborted ? "stopped early" : "finished its work";
    },
  });
  return { tool, release: () => release() };
}

describe("runReply: interrupts", () => {
  it("ends INTERRUPTED when the signal aborts while the model streams", async () => {
    const h = await harness([hang]);
    try {
      const running = runReply(h.env);
      await h.next("model_call_start");
      h.controller.abort();

      expect(await running).toEqual({ kind: "finished", finishedReason: "interrupted" });
      expect(typesOf(h.events)).toEqual(["model_call_start", "model_call_end"]);
      expect(ofType(h.events, "model_call_end")[0]?.finishedReason).toBe("interrupted");
      expect(h.env.message.finishedReason).toBe("interrupted");
      expect(h.env.message.error).toBeUndefined();
      expect(h.env.message.content).toEqual([]);
      expect(h.model.requests).toHaveLength(1);
      expect(h.model.requests[0]?.signal.aborted).toBe(true);
    } finally {
      await h.cleanup();
    }
  });

  it("closes what streamed and gives the unfinished call an INTERRUPTED result", async () => {
    const h = await harness([callThenHang], { files: { "a.txt": "a" } });
    try {
      const running = runReply(h.env);
      await h.next("tool_call_delta");
      h.controller.abort();

      expect(await running).toEqual({ kind: "finished", finishedReason: "interrupted" });
      const call = callOf(h.env.message, "r1");
      expect(typesOf(h.events)).toEqual([
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
      ]);
      expect(ofType(h.events, "tool_result_text_delta")[0]?.delta).toBe(INTERRUPTED_TEXT);
      expect(ofType(h.events, "tool_result_end")[0]).toMatchObject({
        toolCallId: call.id,
        state: "interrupted",
      });
      // The call never ran and the engine was never asked about it.
      expect(call.state).toBe("finished");
      expect(resultOf(h.env.message, "r1")).toMatchObject({
        state: "interrupted",
        output: INTERRUPTED_TEXT,
      });
      expect(h.decisions).toEqual([]);
      expect(h.env.message.content.map((b) => b.type)).toEqual([
        "text",
        "tool_call",
        "tool_result",
      ]);
    } finally {
      await h.cleanup();
    }
  });

  it("puts an InterruptReason's text in the interrupted results", async () => {
    const h = await harness([callThenHang], { files: { "a.txt": "a" } });
    try {
      const running = runReply(h.env);
      await h.next("tool_call_delta");
      h.controller.abort(new InterruptReason("shutting down", "The server shut down."));

      expect(await running).toEqual({ kind: "finished", finishedReason: "interrupted" });
      expect(resultOf(h.env.message, "r1")?.output).toBe("The server shut down.");
    } finally {
      await h.cleanup();
    }
  });

  it("lets a running tool finish on its own signal, then ends INTERRUPTED without a model call", async () => {
    const slow = slowTool();
    const h = await harness([respond("", [{ id: "s1", name: "Slow", input: {} }])], {
      extraTools: [slow.tool],
    });
    try {
      const running = runReply(h.env);
      await h.next("tool_result_start");
      h.controller.abort(); // the reply's signal; the tools' signal stays (a shutdown's grace)
      slow.release();

      expect(await running).toEqual({ kind: "finished", finishedReason: "interrupted" });
      expect(resultOf(h.env.message, "s1")).toMatchObject({
        state: "success",
        output: "finished its work",
      });
      expect(h.model.requests).toHaveLength(1);
      expect(typesOf(h.events).at(-1)).toBe("tool_result_end");
    } finally {
      await h.cleanup();
    }
  });

  it("stops a running tool when the tools' signal aborts too: its result is INTERRUPTED", async () => {
    const slow = slowTool();
    const h = await harness([respond("", [{ id: "s1", name: "Slow", input: {} }])], {
      extraTools: [slow.tool],
    });
    try {
      const running = runReply(h.env);
      await h.next("tool_result_start");
      h.controller.abort();
      h.tools.abort();

      expect(await running).toEqual({ kind: "finished", finishedReason: "interrupted" });
      const result = resultOf(h.env.message, "s1");
      expect(result?.state).toBe("interrupted");
      expect(ofType(h.events, "tool_result_end")).toHaveLength(1);
      const text = ofType(h.events, "tool_result_text_delta").map((e) => e.delta);
      expect(text.join("")).toBe(`stopped early\n${INTERRUPTED_TEXT}`);
      expect(h.model.requests).toHaveLength(1);
    } finally {
      await h.cleanup();
    }
  });

  // The interrupt comes while the batch's allowed call runs; another call of the batch asks.
  it.each([
    {
      what: "ends INTERRUPTED when a user interrupts",
      reason: new Error("interrupted by the user"),
      outcome: { kind: "finished", finishedReason: "interrupted" },
      asking: "interrupted",
    },
    {
      what: "stays parked when a shutdown stops it",
      reason: new InterruptReason("shutting down", "stopped for a shutdown"),
      outcome: { kind: "parked" },
      asking: undefined,
    },
  ])("$what while a call runs beside one that asks", async ({ reason, outcome, asking }) => {
    const slow = slowTool();
    const h = await harness(
      [
        respond("", [
          { id: "s1", name: "Slow", input: {} },
          { id: "d1", name: "Deploy", input: { service: "web" } },
        ]),
      ],
      { extraTools: [slow.tool] },
    );
    try {
      const running = runReply(h.env);
      await h.next("tool_result_start");
      h.controller.abort(reason);
      slow.release();

      expect(await running).toEqual(outcome);
      expect(resultOf(h.env.message, "d1")?.state).toBe(asking);
    } finally {
      await h.cleanup();
    }
  });

  it("interrupts a parked reply: the asking call gets an INTERRUPTED result, the model is not called", async () => {
    const write = { id: "w1", name: "Write", input: { file_path: "out.txt", content: "x" } };
    const h = await harness([respond("", [write])]);
    try {
      expect(await runReply(h.env)).toEqual({ kind: "parked" });
      const parked = h.events.length;
      h.controller.abort();

      expect(await runReply(h.env)).toEqual({ kind: "finished", finishedReason: "interrupted" });
      expect(typesOf(h.events.slice(parked))).toEqual([
        "tool_result_start",
        "tool_result_text_delta",
        "tool_result_end",
      ]);
      expect(resultOf(h.env.message, "w1")).toMatchObject({ state: "interrupted" });
      expect(h.model.requests).toHaveLength(1);
      // Nothing is left to interrupt: a second pass emits nothing.
      interruptCalls(h.env);
      expect(h.events).toHaveLength(parked + 3);
    } finally {
      await h.cleanup();
    }
  });
});
