/**
 * A `Read(…)` ask rule and the search tools, end to end: a Grep of the whole working directory runs
 * without asking and leaves the files the rule covers out (saying so); a Grep of the covered
 * directory itself asks, and once the person allows it, searches the files there. Real server,
 * real client; the model is the scripted server through the openai adapter.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { collect, type Harness, startHarness, toolResult } from "../helpers/parkway-harness.js";

const KEY = `KEY-${Math.random().toString(16).slice(2)}-END`;
const PATTERN = "KEY-[0-9a-f]+-END|needle";
let h: Harness;

beforeAll(async () => {
  h = await startHarness(
    { turns: [{ text: "placeholder" }] },
    { permissions: { ask: ["Read(./secret/**)"] } },
  );
});

afterAll(async () => {
  await h.close();
});

/** Runs one Grep call; confirms it when it parks. */
async function grep(input: Record<string, unknown>) {
  await h.model.reset({
    turns: [{ toolCalls: [{ id: "call_grep", name: "Grep", input }] }, { text: "ok" }],
  });
  const session = await h.client.createSession({ agentId: "test" });
  const wd = session.workingDirectories[0]!;
  await mkdir(path.join(wd, "secret"), { recursive: true });
  await writeFile(path.join(wd, "secret", "key.txt"), `${KEY}\n`);
  await writeFile(path.join(wd, "notes.txt"), "a needle here\n");
  const chat = await h.client.attach(session.id);
  try {
    const events: ServerEvent[] = await collect(chat.message("go", AbortSignal.timeout(15_000)));
    let parked = false;
    for (const e of events) {
      if (e.event?.$case !== "requireUserConfirm") continue;
      parked = true;
      await chat.confirm(e.event.value.toolCalls[0]!);
      events.push(...(await collect(chat.untilSettled(AbortSignal.timeout(15_000)))));
    }
    const start = events.find((e) => e.event?.$case === "toolCallStart");
    const id = start?.event?.$case === "toolCallStart" ? start.event.value.toolCallId : "";
    return { parked, result: toolResult(events, id) };
  } finally {
    chat.close();
  }
}

describe("a Read ask rule and Grep", () => {
  it("a search of the working directory runs unasked and leaves the covered file out", async () => {
    const { parked, result } = await grep({ pattern: PATTERN, output_mode: "content" });
    expect(parked).toBe(false);
    expect(result.state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    expect(result.text).toContain("a needle here");
    expect(result.text).not.toContain(KEY);
    expect(result.text).toContain(
      "left out 1 file covered by the permission rules Read(./secret/**)",
    );
    expect(JSON.stringify(h.model.requests)).not.toContain(KEY);
  });

  it("a search of the covered directory asks, and once allowed finds the key", async () => {
    const { parked, result } = await grep({
      pattern: PATTERN,
      path: "secret",
      output_mode: "content",
    });
    expect(parked).toBe(true);
    expect(result.state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    expect(result.text).toContain(KEY);
    expect(result.text).not.toContain("left out");
  });
});
