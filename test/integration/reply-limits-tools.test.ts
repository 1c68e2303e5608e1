import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FinishedReason } from "../../src/generated/parkway/v1/content.js";
import {
  collect,
  type Harness,
  startedCalls,
  startHarness,
  toolResult,
} from "../helpers/parkway-harness.js";

/**
 * A tool's output counts toward the reply's maxReplyBytes: each run gets at most what is left of it
 * (below maxToolOutputBytes), and the agent's limits are checked against each other at start.
 */
const LIMIT = 16 * 1024;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("reply limits and tools", () => {
  it("cuts a tool's output to what the reply has left, and the reply goes on", async () => {
    h = await startHarness(
      {
        turns: [
          { toolCalls: [{ id: "call_cat", name: "Bash", input: { command: "cat big.txt" } }] },
          { text: "done" },
        ],
      },
      { maxReplyBytes: LIMIT, maxBlockBytes: 4096, maxToolOutputBytes: 1_000_000 },
    );
    const session = await h.client.createSession({ agentId: "test" });
    const dir = path.join(h.workdir, session.id);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, "big.txt"), "x".repeat(100_000));

    const chat = await h.client.attach(session.id);
    const events = await collect(chat.message("show me the file"));
    chat.close();
    const result = toolResult(events, startedCalls(events)[0]!);
    expect(result.text.startsWith("x".repeat(8 * 1024))).toBe(true);
    expect(result.text).toMatch(/\[output truncated at \d+ bytes\]/);
    expect(Buffer.byteLength(result.text)).toBeLessThan(LIMIT);
    const end = events.at(-1)!;
    expect(end.event?.$case === "replyEnd" && end.event.value.finishedReason).toBe(
      FinishedReason.FINISHED_REASON_COMPLETED,
    );

    // Everything the reply streamed is within the bound; the model read the cut output.
    const streamed = events
      .map((e) => (e.event?.$case.endsWith("Delta") ? JSON.stringify(e.event.value) : ""))
      .join("");
    expect(Buffer.byteLength(streamed)).toBeLessThan(LIMIT);
    const told = h.model.requests[1]?.messages.find((m) => m.role === "tool");
    expect(String(told?.content)).toMatch(/\[output truncated at \d+ bytes\]/);
    expect(Buffer.byteLength(String(told?.content))).toBeLessThan(LIMIT);
  });

  it("leaves out a suggested rule past 1 KiB: it would go out with the waiting call", async () => {
    const long = "a".repeat(2000);
    h = await startHarness({
      turns: [
        {
          toolCalls: [
            { id: "call_npm", name: "Bash", input: { command: `npm ${long} && npm test` } },
          ],
        },
      ],
    });
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const events = await collect(chat.message("run it"));
    chat.close();
    const ask = events.find((e) => e.event?.$case === "requireUserConfirm");
    const call =
      ask?.event?.$case === "requireUserConfirm" ? ask.event.value.toolCalls[0] : undefined;
    expect(call?.suggestedRules.map((r) => r.ruleContent)).toEqual(["npm test:*"]);
    expect(call?.decision?.suggestedRules.map((r) => r.ruleContent)).toEqual(["npm test:*"]);
    expect(Buffer.byteLength(call?.decision?.reason ?? "")).toBeLessThanOrEqual(1024);
  });

  it("refuses a maxReplyBytes past what clients can receive, and a maxBlockBytes past maxReplyBytes, naming the field", async () => {
    await expect(startHarness({ turns: [] }, { maxReplyBytes: 2 * 1024 * 1024 })).rejects.toThrow(
      /maxReplyBytes/,
    );
    await expect(
      startHarness({ turns: [] }, { maxReplyBytes: 64 * 1024, maxBlockBytes: 128 * 1024 }),
    ).rejects.toThrow(/agents\[0\]\.maxBlockBytes.*at most maxReplyBytes/);
  });
});
