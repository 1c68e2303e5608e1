import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runReply } from "../../../src/agent/reply-loop.js";
import { respond } from "../session/core.js";
import { callOf, confirm, harness, ofType, resultOf, typesOf } from "./harness.js";

const write = { id: "w1", name: "Write", input: { file_path: "out.txt", content: "hi" } };

describe("runReply: a call that asks parks the reply", () => {
  it("parks with REQUIRE_USER_CONFIRM, tells `decided` first, and runs nothing", async () => {
    const h = await harness([respond("Writing it.", [write])]);
    try {
      const outcome = await runReply(h.env);

      expect(outcome).toEqual({ kind: "parked" });
      const call = callOf(h.env.message, "w1");
      expect(call.state).toBe("asking");
      expect(call.decision).toMatchObject({ behavior: "ask", check: "mode.default" });
      expect(call.expiresAt).toBeUndefined(); // the agent has no confirm timeout

      // The event carries a copy of the call as it asks, with the rules that would allow it.
      const asks = ofType(h.events, "require_user_confirm");
      expect(asks).toHaveLength(1);
      expect(asks[0]?.toolCalls).toHaveLength(1);
      const shown = asks[0]!.toolCalls[0]!;
      expect(shown).toMatchObject({ id: call.id, name: "Write", state: "asking" });
      expect(JSON.parse(shown.input)).toEqual(write.input);
      expect(shown.suggestedRules).toEqual([
        {
          toolName: "Write",
          ruleContent: `${h.work}/**`,
          behavior: "allow",
          source: "suggested",
        },
      ]);
      expect(shown).not.toBe(call); // a snapshot, not the live block

      // `decided` heard of the ASK right before the event that shows it.
      expect(h.decisions).toHaveLength(1);
      expect(h.decisions[0]).toMatchObject({
        callId: call.id,
        name: "Write",
        decision: { behavior: "ask" },
      });
      expect(h.decisions[0]!.eventsBefore).toBe(typesOf(h.events).indexOf("require_user_confirm"));

      // Nothing ran, the reply is not finished, and the model was not asked again.
      expect(typesOf(h.events)).not.toContain("tool_result_start");
      expect(typesOf(h.events).at(-1)).toBe("require_user_confirm");
      expect(h.env.message.finishedReason).toBeUndefined();
      expect(h.model.requests).toHaveLength(1);
      await expect(stat(path.join(h.work, "out.txt"))).rejects.toThrow();
    } finally {
      await h.cleanup();
    }
  });

  it("resumes after the confirmation: the call runs and the model reads its result", async () => {
    const h = await harness([respond("", [write]), respond("Written.")]);
    try {
      expect(await runReply(h.env)).toEqual({ kind: "parked" });
      const asked = h.events.length;
      confirm(callOf(h.env.message, "w1"));

      const outcome = await runReply(h.env);

      expect(outcome).toEqual({ kind: "finished", finishedReason: "completed" });
      // An allowed call is not decided again.
      expect(h.decisions).toHaveLength(1);
      expect(typesOf(h.events.slice(asked))[0]).toBe("tool_result_start");
      expect(resultOf(h.env.message, "w1")).toMatchObject({ state: "success" });
      expect(await readFile(path.join(h.work, "out.txt"), "utf8")).toBe("hi");
      expect(h.model.requests).toHaveLength(2);
      expect(h.model.requests[1]?.messages.at(-1)).toMatchObject({
        role: "tool",
        toolCallId: "w1",
      });
      expect(h.env.progress.iteration).toBe(2);
    } finally {
      await h.cleanup();
    }
  });

  it("stays parked when resumed before an answer, emitting nothing more", async () => {
    const h = await harness([respond("", [write])]);
    try {
      expect(await runReply(h.env)).toEqual({ kind: "parked" });
      const before = h.events.length;
      expect(await runReply(h.env)).toEqual({ kind: "parked" });
      expect(h.events).toHaveLength(before);
      expect(h.decisions).toHaveLength(1);
      expect(h.model.requests).toHaveLength(1);
    } finally {
      await h.cleanup();
    }
  });

  it("gives an asking call an expiry when the agent has a confirm timeout", async () => {
    const h = await harness([respond("", [write])], { confirmTimeoutMs: 60_000 });
    try {
      expect(await runReply(h.env)).toEqual({ kind: "parked" });
      const call = callOf(h.env.message, "w1");
      expect(call.expiresAt).toEqual(expect.any(String));
      expect(Number.isNaN(Date.parse(call.expiresAt!))).toBe(false);
      expect(ofType(h.events, "require_user_confirm")[0]?.toolCalls[0]?.expiresAt).toBe(
        call.expiresAt,
      );
    } finally {
      await h.cleanup();
    }
  });

  it("asks on an ask rule even for a read-only call", async () => {
    const read = { id: "r1", name: "Read", input: { file_path: "notes.txt" } };
    const h = await harness([respond("", [read])], {
      rules: [{ toolName: "Read", behavior: "ask", source: "config" }],
      files: { "notes.txt": "x" },
    });
    try {
      expect(await runReply(h.env)).toEqual({ kind: "parked" });
      expect(h.decisions[0]?.decision).toMatchObject({ behavior: "ask", check: "rule.ask" });
      expect(callOf(h.env.message, "r1").state).toBe("asking");
    } finally {
      await h.cleanup();
    }
  });
});
