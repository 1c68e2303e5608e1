/**
 * Answers to different calls of one park, sent at the same moment (two people, two clients), both
 * apply: the first resumes the reply, which parks again on the other call, and the second is then
 * applied to that park instead of being refused. Real server and clients; the scripted model.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { confirmation, executionResult } from "../../src/client/inputs.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import type { ToolCallBlock } from "../../src/generated/parkway/v1/content.js";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";

let h: Harness;

beforeAll(async () => {
  h = await startHarness(
    {
      turns: [
        {
          match: { lastUser: "^deploy" },
          repeat: true,
          toolCalls: [
            { name: "Deploy", input: { target: "a" } },
            { name: "Deploy", input: { target: "b" } },
          ],
        },
        {
          match: { lastUser: "^ask" },
          repeat: true,
          toolCalls: [
            { name: "Alpha", input: {} },
            { name: "Beta", input: {} },
          ],
        },
        { match: { toolName: "Deploy" }, repeat: true, text: "deployed" },
        { match: { toolName: "Beta" }, repeat: true, text: "both done" },
      ],
    },
    {
      externalTools: [
        { name: "Deploy", inputSchema: { type: "object" } },
        { name: "Alpha", inputSchema: { type: "object" } },
        { name: "Beta", inputSchema: { type: "object" } },
      ],
      permissions: { allow: ["Deploy"] },
    },
  );
});

afterAll(async () => {
  await h.close();
});

const message = (text: string) => ({ $case: "userMessage" as const, value: { text, content: [] } });

/** Starts a reply with `text` in a new session; resolves with its parked calls. */
async function park(text: string): Promise<{ sessionId: string; calls: ToolCallBlock[] }> {
  const session = await h.client.createSession({ agentId: "test" });
  const parked = await h.client.reply({ sessionId: session.id, input: message(text) });
  expect(parked.pendingToolCalls).toHaveLength(2);
  return { sessionId: session.id, calls: parked.pendingToolCalls };
}

/** Resolves once the session's reply has finished. */
async function settled(sessionId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const s = await h.client.getSession(sessionId);
    if (s.status === SessionStatus.SESSION_STATUS_IDLE) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`session ${sessionId} did not settle`);
}

describe("answers to different calls of one park, at once", () => {
  it("two external results both apply, and the reply goes on", async () => {
    for (let round = 0; round < 5; round++) {
      const { sessionId, calls } = await park("deploy");
      const sent = await Promise.allSettled(
        calls.map((call) =>
          h.client.send(sessionId, {
            $case: "externalExecutionResult",
            value: { replyId: "", executionResults: [executionResult(call, { output: "ok" })] },
          }),
        ),
      );
      expect(sent.map((s) => (s.status === "fulfilled" ? "ok" : String(s.reason)))).toEqual([
        "ok",
        "ok",
      ]);
      await settled(sessionId);
      const { messages } = await h.client.listMessages(sessionId);
      expect(JSON.stringify(messages)).toContain("deployed");
    }
  });

  it("two confirmations both apply, and each call then awaits its result", async () => {
    for (let round = 0; round < 5; round++) {
      const { sessionId, calls } = await park("ask");
      const sent = await Promise.allSettled(
        calls.map((call) =>
          h.client.send(sessionId, {
            $case: "userConfirmResult",
            value: { replyId: "", confirmResults: [confirmation(call)] },
          }),
        ),
      );
      expect(sent.map((s) => (s.status === "fulfilled" ? "ok" : String(s.reason)))).toEqual([
        "ok",
        "ok",
      ]);
      // Both confirmed: each awaits its client's result now, and nothing asks any more.
      let pending: ToolCallBlock[] = [];
      for (let i = 0; i < 200 && pending.length < 2; i++) {
        pending = (await h.client.getSession(sessionId)).pendingToolCalls;
        if (pending.length < 2) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(pending.map((c) => c.name).sort()).toEqual(["Alpha", "Beta"]);
      for (const call of pending) {
        await h.client.send(sessionId, {
          $case: "externalExecutionResult",
          value: { replyId: "", executionResults: [executionResult(call, { output: "ok" })] },
        });
      }
      await settled(sessionId);
      expect(JSON.stringify((await h.client.listMessages(sessionId)).messages)).toContain(
        "both done",
      );
    }
  });
});
