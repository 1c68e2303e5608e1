import { describe, expect, it } from "vitest";
import { runReply } from "../../../src/agent/reply-loop.js";
import { respond } from "../session/core.js";
import { callOf, clientResult, confirm, harness, ofType, resultOf, typesOf } from "./harness.js";

const deploy = { id: "d1", name: "Deploy", input: { service: "web" } };
const allowDeploy = { toolName: "Deploy", behavior: "allow" as const, source: "config" as const };

describe("runReply: a client-executed tool", () => {
  it("parks an allowed external call with REQUIRE_EXTERNAL_EXECUTION, its result started", async () => {
    const h = await harness([respond("Deploying.", [deploy])], {
      rules: [allowDeploy],
      confirmTimeoutMs: 60_000,
    });
    try {
      const outcome = await runReply(h.env);

      expect(outcome).toEqual({ kind: "parked" });
      const call = callOf(h.env.message, "d1");
      expect(call).toMatchObject({ state: "submitted", resultStarted: true });
      expect(call.expiresAt).toEqual(expect.any(String));
      expect(h.decisions.map((d) => [d.name, d.decision.behavior, d.decision.check])).toEqual([
        ["Deploy", "allow", "rule.allow"],
      ]);

      // TOOL_RESULT_START (the client's result will follow it), then the request to the client.
      const types = typesOf(h.events);
      expect(types.slice(-3)).toEqual([
        "model_call_end",
        "tool_result_start",
        "require_external_execution",
      ]);
      expect(h.decisions[0]!.eventsBefore).toBe(types.indexOf("tool_result_start"));
      const [request] = ofType(h.events, "require_external_execution");
      expect(request?.toolCalls).toHaveLength(1);
      expect(request?.toolCalls[0]).toMatchObject({
        id: call.id,
        name: "Deploy",
        state: "submitted",
        input: JSON.stringify(deploy.input),
        expiresAt: call.expiresAt,
      });
      expect(types).not.toContain("require_user_confirm");
      expect(types).not.toContain("tool_result_end");
      expect(resultOf(h.env.message, "d1")).toBeUndefined();
      expect(h.model.requests).toHaveLength(1);
    } finally {
      await h.cleanup();
    }
  });

  it("resumes with the client's result: the model reads it, no second TOOL_RESULT_START", async () => {
    const h = await harness([respond("", [deploy]), respond("Deployed.")], {
      rules: [allowDeploy],
    });
    try {
      expect(await runReply(h.env)).toEqual({ kind: "parked" });
      clientResult(h.env.message, callOf(h.env.message, "d1"), "web is live");

      const outcome = await runReply(h.env);

      expect(outcome).toEqual({ kind: "finished", finishedReason: "completed" });
      expect(ofType(h.events, "tool_result_start")).toHaveLength(1);
      expect(ofType(h.events, "require_external_execution")).toHaveLength(1);
      expect(h.model.requests).toHaveLength(2);
      expect(h.model.requests[1]?.messages.at(-1)).toEqual({
        role: "tool",
        toolCallId: "d1",
        content: "web is live",
      });
    } finally {
      await h.cleanup();
    }
  });

  it("asks first in default mode, and is handed to the client once confirmed", async () => {
    const h = await harness([respond("", [deploy])]);
    try {
      expect(await runReply(h.env)).toEqual({ kind: "parked" });
      expect(h.decisions[0]?.decision).toMatchObject({ behavior: "ask", check: "custom_tool" });
      expect(h.decisions[0]?.decision.suggestedRules).toEqual([
        { toolName: "Deploy", behavior: "allow", source: "suggested" },
      ]);
      expect(typesOf(h.events).at(-1)).toBe("require_user_confirm");
      expect(typesOf(h.events)).not.toContain("require_external_execution");

      confirm(callOf(h.env.message, "d1"));
      expect(await runReply(h.env)).toEqual({ kind: "parked" });

      expect(typesOf(h.events).slice(-2)).toEqual([
        "tool_result_start",
        "require_external_execution",
      ]);
      expect(callOf(h.env.message, "d1").state).toBe("submitted");
      expect(h.decisions).toHaveLength(1);
      expect(h.model.requests).toHaveLength(1);
    } finally {
      await h.cleanup();
    }
  });

  it("hands AskUser to the client without asking permission", async () => {
    const question = {
      questions: [
        {
          question: "Which colour?",
          header: "Colour",
          options: [
            { label: "Red", description: "warm" },
            { label: "Blue", description: "cool" },
          ],
        },
      ],
    };
    const h = await harness([respond("", [{ id: "q1", name: "AskUser", input: question }])]);
    try {
      expect(await runReply(h.env)).toEqual({ kind: "parked" });
      expect(h.decisions[0]?.decision).toMatchObject({ behavior: "allow", check: "tool.ask_user" });
      expect(ofType(h.events, "require_external_execution")[0]?.toolCalls[0]?.name).toBe("AskUser");
      expect(callOf(h.env.message, "q1").state).toBe("submitted");
    } finally {
      await h.cleanup();
    }
  });
});
