import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { processToolCalls } from "../../../src/agent/process-tool-calls.js";
import type { EventBody } from "../../../src/agent/events.js";
import type { ToolCallBlock } from "../../../src/agent/types.js";
import { globTool } from "../../../src/tools/index.js";
import { confirm, harness, type Harness, pendingCall, resultsOf } from "./harness.js";

/** The calls as a model turn leaves them in the message, before processToolCalls sees them. */
function place(h: Harness, calls: ToolCallBlock[]): ToolCallBlock[] {
  h.env.message.content.push(...calls);
  return calls;
}

/** Each event as `type:call` (the call by its model id), for checking the order. */
function trace(h: Harness, calls: ToolCallBlock[]): string[] {
  const name = (id: string) => calls.find((c) => c.id === id)?.modelId ?? id;
  return h.events.map((e: EventBody) => {
    if ("toolCallId" in e) return `${e.type}:${name(e.toolCallId)}`;
    if ("toolCalls" in e) return `${e.type}:${e.toolCalls.map((c) => name(c.id)).join("+")}`;
    return e.type;
  });
}

describe("processToolCalls on one turn's calls", () => {
  it("runs the allowed, asks for one, denies one, fails the invalid, and stops at the next batch", async () => {
    const h = await harness([], {
      rules: [{ toolName: "Glob", behavior: "deny", source: "config" }],
      extraTools: [globTool],
      files: { "a.txt": "alpha" },
    });
    try {
      const calls = place(h, [
        pendingCall("read", "Read", { file_path: "a.txt" }),
        pendingCall("deploy", "Deploy", { service: "web" }),
        pendingCall("glob", "Glob", { pattern: "*.txt" }),
        pendingCall("bad", "Read", { nope: 1 }),
        pendingCall("write", "Write", { file_path: "b.txt", content: "beta" }), // a batch of its own
      ]);
      const [read, deploy, glob, bad, write] = calls;

      const result = await processToolCalls(calls, h.env);

      expect(result).toBe("parked");
      expect(calls.map((c) => c.state)).toEqual([
        "finished",
        "asking",
        "finished",
        "finished",
        "pending",
      ]);
      // The engine is asked about each valid call of the first batch, in order; not about the
      // invalid one, nor about the Write waiting behind the batch.
      expect(h.decisions.map((d) => [d.callId, d.decision.behavior])).toEqual([
        [read!.id, "allow"],
        [deploy!.id, "ask"],
        [glob!.id, "deny"],
      ]);
      // Each decision is told right before its own first event (the Read's before any event).
      expect(h.decisions.map((d) => d.eventsBefore)).toEqual([0, 0, 1]);
      // Decisions and prompts first, in the calls' order; then what runs.
      expect(trace(h, calls)).toEqual([
        "require_user_confirm:deploy",
        "tool_result_start:glob",
        "tool_result_text_delta:glob",
        "tool_result_end:glob",
        "tool_result_start:bad",
        "tool_result_text_delta:bad",
        "tool_result_end:bad",
        "tool_result_start:read",
        "tool_result_text_delta:read",
        "tool_result_end:read",
      ]);
      expect(resultsOf(h.env.message).map((r) => [r.id, r.state])).toEqual([
        [glob!.id, "denied"],
        [bad!.id, "error"],
        [read!.id, "success"],
      ]);
      expect(resultsOf(h.env.message)[2]?.output).toContain("alpha");
      expect(write!.decision).toBeUndefined();
      expect(h.model.requests).toEqual([]);
    } finally {
      await h.cleanup();
    }
  });

  it("runs sequential batches in order: a later call waits until the earlier one is answered", async () => {
    const h = await harness([], { files: { "a.txt": "alpha" } });
    try {
      const calls = place(h, [
        pendingCall("write", "Write", { file_path: "b.txt", content: "beta" }),
        pendingCall("read", "Read", { file_path: "b.txt" }),
      ]);
      const [write, read] = calls;

      expect(await processToolCalls(calls, h.env)).toBe("parked");
      expect([write!.state, read!.state]).toEqual(["asking", "pending"]);
      expect(trace(h, calls)).toEqual(["require_user_confirm:write"]);

      confirm(write!);
      expect(await processToolCalls(calls, h.env)).toBe("done");

      expect(trace(h, calls).slice(1)).toEqual([
        "tool_result_start:write",
        "tool_result_text_delta:write",
        "tool_result_end:write",
        "tool_result_start:read",
        "tool_result_text_delta:read",
        "tool_result_end:read",
      ]);
      // The Read ran after the Write and saw what it wrote.
      expect(resultsOf(h.env.message)[1]?.output).toContain("beta");
      expect(await readFile(path.join(h.work, "b.txt"), "utf8")).toBe("beta");
      expect(h.decisions.map((d) => d.callId)).toEqual([write!.id, read!.id]);
    } finally {
      await h.cleanup();
    }
  });

  it("holds a call behind an earlier one whose suggested rule covers it, then decides it again", async () => {
    const h = await harness([]);
    try {
      const calls = place(h, [
        pendingCall("d1", "Deploy", { service: "web" }),
        pendingCall("d2", "Deploy", { service: "api" }),
      ]);
      const [d1, d2] = calls;

      expect(await processToolCalls(calls, h.env)).toBe("parked");
      // One prompt, for the first call only; the second is held, with no decision told.
      expect(trace(h, calls)).toEqual(["require_user_confirm:d1"]);
      expect(d1!.state).toBe("asking");
      expect(d2).toMatchObject({ state: "pending", heldBy: d1!.id });
      expect(h.decisions.map((d) => d.callId)).toEqual([d1!.id]);

      // The person confirms d1 and accepts its suggested rule: d2 is then allowed by it.
      confirm(d1!);
      h.permissions.rules = [...h.permissions.rules, ...d1!.suggestedRules!];
      expect(await processToolCalls(calls, h.env)).toBe("parked"); // both await the client

      expect(d2!.heldBy).toBeUndefined();
      expect(h.decisions.map((d) => [d.callId, d.decision.check])).toEqual([
        [d1!.id, "custom_tool"],
        [d2!.id, "rule.allow"],
      ]);
      expect(trace(h, calls).slice(1)).toEqual([
        "tool_result_start:d1",
        "require_external_execution:d1",
        "tool_result_start:d2",
        "require_external_execution:d2",
      ]);
      expect(calls.map((c) => c.state)).toEqual(["submitted", "submitted"]);
    } finally {
      await h.cleanup();
    }
  });

  it("decides every call of a concurrent batch before any of them runs", async () => {
    const h = await harness([], { files: { "a.txt": "alpha", "b.txt": "beta" } });
    try {
      const calls = place(h, [
        pendingCall("a", "Read", { file_path: "a.txt" }),
        pendingCall("b", "Read", { file_path: "b.txt" }),
      ]);

      expect(await processToolCalls(calls, h.env)).toBe("done");
      expect(h.decisions.map((d) => d.eventsBefore)).toEqual([0, 0]);
      expect(calls.map((c) => c.state)).toEqual(["finished", "finished"]);
      expect(resultsOf(h.env.message).map((r) => r.state)).toEqual(["success", "success"]);
    } finally {
      await h.cleanup();
    }
  });

  it("does nothing once the signal has aborted", async () => {
    const h = await harness([], { files: { "a.txt": "alpha" } });
    try {
      const calls = place(h, [pendingCall("a", "Read", { file_path: "a.txt" })]);
      h.controller.abort();

      expect(await processToolCalls(calls, h.env)).toBe("done");
      expect(h.events).toEqual([]);
      expect(h.decisions).toEqual([]);
      expect(calls[0]!.state).toBe("pending"); // the caller interrupts what is left
    } finally {
      await h.cleanup();
    }
  });
});
