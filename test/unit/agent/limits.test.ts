import { describe, expect, it } from "vitest";
import { runReply } from "../../../src/agent/reply-loop.js";
import { REPLY_TOO_LARGE } from "../../../src/agent/reply-budget.js";
import { respond, type Turn } from "../session/core.js";
import { callsOf, harness, ofType, resultsOf } from "./harness.js";

/** A model that reads a file on every call. */
const readAgain = (n: number): Turn[] =>
  Array.from({ length: n }, (_, i) =>
    respond(`Reading ${i}.`, [{ id: `r${i}`, name: "Read", input: { file_path: "a.txt" } }]),
  );

describe("runReply: the agent's limits", () => {
  it("ends EXCEED_MAX_ITERS after maxIters model calls, the last calls' results kept", async () => {
    const h = await harness(readAgain(5), { maxIters: 2, files: { "a.txt": "alpha" } });
    try {
      const outcome = await runReply(h.env);

      expect(outcome).toEqual({
        kind: "finished",
        finishedReason: "exceed_max_iters",
        error: {
          code: "max_iters",
          message: "the reply reached the agent's limit of 2 model calls",
        },
      });
      expect(h.model.requests).toHaveLength(2);
      expect(h.env.progress.iteration).toBe(2);
      // Both iterations' calls ran before the limit stopped the loop.
      expect(resultsOf(h.env.message).map((r) => r.state)).toEqual(["success", "success"]);
      expect(callsOf(h.env.message).every((c) => c.state === "finished")).toBe(true);
      expect(ofType(h.events, "model_call_start")).toHaveLength(2);
      expect(h.env.message.finishedReason).toBe("exceed_max_iters");
    } finally {
      await h.cleanup();
    }
  });

  it("counts the iterations a resumed reply already made", async () => {
    const h = await harness(readAgain(1), { maxIters: 3, files: { "a.txt": "alpha" } });
    try {
      h.env.progress.iteration = 3;
      const outcome = await runReply(h.env);
      expect(outcome).toMatchObject({ finishedReason: "exceed_max_iters" });
      expect(h.model.requests).toHaveLength(0);
      expect(h.events).toEqual([]);
    } finally {
      await h.cleanup();
    }
  });

  it("ends ERROR reply_too_large when the model's output passes maxReplyBytes", async () => {
    const long = "x".repeat(4000);
    const h = await harness(
      [respond(long, [{ id: "r1", name: "Read", input: { file_path: "a" } }])],
      {
        maxReplyBytes: 1000,
      },
    );
    try {
      const outcome = await runReply(h.env);

      expect(outcome).toMatchObject({
        kind: "finished",
        finishedReason: "error",
        error: { code: REPLY_TOO_LARGE },
      });
      // The text was cut, the call never ran and is gone, and a marker says why.
      const texts = h.env.message.content.filter((b) => b.type === "text");
      expect(texts).toHaveLength(2);
      expect(texts[0]?.type === "text" && texts[0].text.length).toBeLessThan(long.length);
      expect(texts[1]?.type === "text" && texts[1].text).toContain("1000");
      expect(callsOf(h.env.message)).toEqual([]);
      expect(ofType(h.events, "tool_result_start")).toEqual([]);
      expect(ofType(h.events, "model_call_end")[0]?.finishedReason).toBe("error");
      expect(h.model.requests).toHaveLength(1);
    } finally {
      await h.cleanup();
    }
  });
});
