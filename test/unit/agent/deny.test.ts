import { stat } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runReply } from "../../../src/agent/reply-loop.js";
import { respond } from "../session/core.js";
import { callOf, harness, ofType, resultOf, typesOf } from "./harness.js";

const write = { id: "w1", name: "Write", input: { file_path: "out.txt", content: "hi" } };

describe("runReply: a denied call", () => {
  it("finishes DENIED by a deny rule, without running, and the model reads the denial", async () => {
    const h = await harness([respond("Writing.", [write]), respond("I may not write.")], {
      rules: [{ toolName: "Write", behavior: "deny", source: "config" }],
    });
    try {
      const outcome = await runReply(h.env);

      expect(outcome).toEqual({ kind: "finished", finishedReason: "completed" });
      const call = callOf(h.env.message, "w1");
      expect(call.state).toBe("finished");
      expect(call.decision).toMatchObject({ behavior: "deny", check: "rule.deny" });
      const result = resultOf(h.env.message, "w1");
      expect(result).toEqual({
        type: "tool_result",
        id: call.id,
        name: "Write",
        output: "Permission denied: denied by rule Write",
        state: "denied",
      });
      await expect(stat(path.join(h.work, "out.txt"))).rejects.toThrow();

      // START, the reason as one delta, END(DENIED); no confirmation asked.
      const types = typesOf(h.events);
      const start = types.indexOf("tool_result_start");
      expect(types.slice(start, start + 3)).toEqual([
        "tool_result_start",
        "tool_result_text_delta",
        "tool_result_end",
      ]);
      expect(ofType(h.events, "tool_result_text_delta")[0]?.delta).toBe(result?.output);
      expect(ofType(h.events, "tool_result_end")[0]).toEqual({
        type: "tool_result_end",
        toolCallId: call.id,
        state: "denied",
      });
      expect(types).not.toContain("require_user_confirm");
      // `decided` heard of the DENY before the result started.
      expect(h.decisions.map((d) => d.decision.behavior)).toEqual(["deny"]);
      expect(h.decisions[0]!.eventsBefore).toBe(start);

      // The next request carries the denial as the call's result.
      expect(h.model.requests).toHaveLength(2);
      expect(h.model.requests[1]?.messages.slice(-2)).toEqual([
        {
          role: "assistant",
          content: "Writing.",
          toolCalls: [{ id: "w1", name: "Write", input: JSON.stringify(write.input) }],
        },
        { role: "tool", toolCallId: "w1", content: "Permission denied: denied by rule Write" },
      ]);
    } finally {
      await h.cleanup();
    }
  });

  it("denies what would ask in dont_ask mode", async () => {
    // dont_ask allows edits inside the working directories; this one is outside them.
    const outside = { ...write, input: { file_path: "/parkway-elsewhere/out.txt", content: "x" } };
    const h = await harness([respond("", [outside]), respond("ok")], { mode: "dont_ask" });
    try {
      const outcome = await runReply(h.env);
      expect(outcome).toEqual({ kind: "finished", finishedReason: "completed" });
      expect(h.decisions[0]?.decision).toMatchObject({ behavior: "deny", check: "mode.dont_ask" });
      expect(resultOf(h.env.message, "w1")?.state).toBe("denied");
      expect(h.model.requests[1]?.messages.at(-1)).toMatchObject({
        role: "tool",
        content: expect.stringContaining("Permission denied:") as unknown,
      });
    } finally {
      await h.cleanup();
    }
  });

  it("finishes a call with an invalid input ERROR without asking the engine", async () => {
    const bad = { id: "b1", name: "Read", input: { path: "wrong field" } };
    const h = await harness([respond("", [bad]), respond("Sorry.")]);
    try {
      expect(await runReply(h.env)).toEqual({ kind: "finished", finishedReason: "completed" });
      expect(h.decisions).toEqual([]);
      expect(resultOf(h.env.message, "b1")?.state).toBe("error");
      expect(h.model.requests[1]?.messages.at(-1)).toMatchObject({
        role: "tool",
        toolCallId: "b1",
      });
    } finally {
      await h.cleanup();
    }
  });
});
