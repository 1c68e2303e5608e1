import { existsSync } from "node:fs";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import {
  collect,
  type Harness,
  kind,
  shape,
  startedCalls,
  startHarness,
} from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const callId = (e: ServerEvent): string => {
  const v = e.event?.value as { toolCallId?: string } | undefined;
  return v?.toolCallId ?? "";
};

function resultText(events: ServerEvent[], id: string): string {
  return events
    .filter((e) => e.event?.$case === "toolResultTextDelta" && e.event.value.toolCallId === id)
    .map((e) => (e.event?.$case === "toolResultTextDelta" ? e.event.value.delta : ""))
    .join("");
}

function resultState(events: ServerEvent[], id: string): number | undefined {
  const end = events.find(
    (e) => e.event?.$case === "toolResultEnd" && e.event.value.toolCallId === id,
  );
  return end?.event?.$case === "toolResultEnd" ? end.event.value.state : undefined;
}

/** A new session of the agent and its (own) first working directory. */
async function newSession(): Promise<{ id: string; wd: string }> {
  const session = await h!.client.createSession({ agentId: "test" });
  return { id: session.id, wd: session.workingDirectories[0]! };
}

async function run(sessionId: string, text: string): Promise<ServerEvent[]> {
  const chat = await h!.client.attach(sessionId);
  try {
    return await collect(chat.message(text));
  } finally {
    chat.close();
  }
}

describe("tool calls in a reply", () => {
  it("runs two parallel read-only calls together and gives both results to the next model turn", async () => {
    h = await startHarness({ turns: [{ text: "placeholder" }] }, { permissionMode: "bypass" });
    const session = await newSession();
    await writeFile(path.join(session.wd, "a.txt"), "alpha\n");
    await writeFile(path.join(session.wd, "b.txt"), "bravo\n");
    await h.model.reset({
      turns: [
        {
          toolCalls: [
            { id: "call_a", name: "Read", input: { file_path: path.join(session.wd, "a.txt") } },
            { id: "call_b", name: "Read", input: { file_path: path.join(session.wd, "b.txt") } },
          ],
          chunkSize: 4,
        },
        { text: "Both files read." },
      ],
    });
    const events = await run(session.id, "read both");
    const kinds = events.map(kind);
    const [a, b] = startedCalls(events);

    // START/DELTA of the two calls interleave: b starts before a's deltas are over.
    const firstDeltaOfA = events.findIndex((e) => kind(e) === "tool_call_delta" && callId(e) === a);
    const startOfB = events.findIndex((e) => kind(e) === "tool_call_start" && callId(e) === b);
    const lastDeltaOfA = events.findLastIndex(
      (e) => kind(e) === "tool_call_delta" && callId(e) === a,
    );
    expect(startOfB).toBeGreaterThan(-1);
    expect(startOfB).toBeLessThan(lastDeltaOfA);
    expect(firstDeltaOfA).toBeLessThan(lastDeltaOfA);
    // Both ENDs come together, right before the first MODEL_CALL_END.
    const firstEnd = kinds.indexOf("model_call_end");
    expect(kinds.slice(firstEnd - 2, firstEnd)).toEqual(["tool_call_end", "tool_call_end"]);
    expect(kinds.indexOf("tool_call_end")).toBe(firstEnd - 2);

    expect(resultState(events, a!)).toBe(1);
    expect(resultState(events, b!)).toBe(1);
    expect(resultText(events, a!)).toContain("alpha");
    expect(resultText(events, b!)).toContain("bravo");
    expect(shape(events).slice(-6)).toEqual([
      "model_call_start",
      "text_block_start",
      "text_block_delta",
      "text_block_end",
      "model_call_end",
      "reply_end",
    ]);

    const second = h.model.requests[1]!;
    const toolMessages = second.messages.filter((m) => m.role === "tool");
    // The model gets its own ids back.
    expect(toolMessages.map((m) => m.tool_call_id).sort()).toEqual(["call_a", "call_b"]);
    expect(JSON.stringify(toolMessages)).toContain("alpha");
    expect(JSON.stringify(toolMessages)).toContain("bravo");
  });

  it("runs a Write then a Read of the same turn one after the other", async () => {
    h = await startHarness({ turns: [{ text: "placeholder" }] }, { permissionMode: "bypass" });
    const session = await newSession();
    const file = path.join(session.wd, "note.txt");
    await h.model.reset({
      turns: [
        {
          toolCalls: [
            { id: "call_w", name: "Write", input: { file_path: file, content: "written first" } },
            { id: "call_r", name: "Read", input: { file_path: file } },
          ],
        },
        { text: "done" },
      ],
    });
    const events = await run(session.id, "write then read");
    const [w, r] = startedCalls(events);
    const order = events
      .filter((e) => ["tool_result_start", "tool_result_end"].includes(kind(e)))
      .map((e) => `${kind(e)}:${callId(e)}`);
    expect(order).toEqual([
      `tool_result_start:${w}`,
      `tool_result_end:${w}`,
      `tool_result_start:${r}`,
      `tool_result_end:${r}`,
    ]);
    expect(resultText(events, r!)).toContain("written first");
    expect(await readFile(file, "utf8")).toBe("written first");
  });

  it("turns a schema failure, a path outside the working directory and a symlink escape into error results", async () => {
    h = await startHarness({ turns: [{ text: "placeholder" }] }, { permissionMode: "bypass" });
    const session = await newSession();
    const outside = path.join(path.dirname(h.workdir), "outside");
    await mkdir(outside, { recursive: true });
    await writeFile(path.join(outside, "secret.txt"), "top secret");
    await symlink(outside, path.join(session.wd, "link"));
    await h.model.reset({
      turns: [
        {
          toolCalls: [
            { id: "call_schema", name: "Read", input: { file_path: 42, bogus: true } },
            { id: "call_json", name: "Read", input: '{"file_path": "/tmp' },
            {
              id: "call_out",
              name: "Read",
              input: { file_path: path.join(outside, "secret.txt") },
            },
            {
              id: "call_link",
              name: "Read",
              input: { file_path: path.join(session.wd, "link", "secret.txt") },
            },
            {
              id: "call_write",
              name: "Write",
              input: { file_path: path.join(session.wd, "link", "planted.txt"), content: "x" },
            },
          ],
        },
        { text: "ok" },
      ],
    });
    const events = await run(session.id, "try to escape");
    const calls = startedCalls(events);
    expect(calls).toHaveLength(5);
    const [schema, json, out] = calls;
    for (const id of calls) {
      expect(resultState(events, id), id).toBe(2); // ERROR
      expect(resultText(events, id), id).not.toContain("top secret");
    }
    expect(resultText(events, schema!)).toMatch(/file_path/);
    expect(resultText(events, json!)).toMatch(/not valid JSON/);
    expect(resultText(events, out!)).toMatch(/outside/);
    expect(existsSync(path.join(outside, "planted.txt"))).toBe(false);
    // The model sees the errors on its next turn.
    const tools = h.model.requests[1]!.messages.filter((m) => m.role === "tool");
    expect(tools).toHaveLength(5);
  });
});
