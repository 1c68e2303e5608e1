import { describe, expect, it } from "vitest";
import { toModelMessages } from "../../../src/agent/to-model-messages.js";
import type { Msg } from "../../../src/agent/types.js";

const user = (id: string, text: string): Msg => ({
  id,
  role: "user",
  name: "user",
  content: [{ type: "text", id: `${id}-b`, text }],
  createdAt: "2026-01-01T00:00:00.000Z",
});

const assistant = (id: string, text: string): Msg => ({
  id,
  role: "assistant",
  name: "a",
  content: [{ type: "text", id: `${id}-b`, text }],
  createdAt: "2026-01-01T00:00:00.000Z",
});

describe("toModelMessages", () => {
  it("gives the same messages for a history converted again, and the current reply as it is now", () => {
    const history = [user("m1", "hi"), assistant("r1", "hello"), user("m2", "more")];
    const current = assistant("r2", "");
    const first = toModelMessages("be brief", history, current);
    expect(first).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello", toolCalls: [] },
      { role: "user", content: "more" },
    ]);
    // The reply being run changes between model calls: each call sees it as it is.
    current.content.push({ type: "text", id: "r2-b", text: "partial" });
    const second = toModelMessages("be brief", history, current);
    expect(second.slice(0, 4)).toEqual(first);
    expect(second[4]).toEqual({ role: "assistant", content: "partial", toolCalls: [] });
    // The system prompt's and the history's are the very objects of the first call (their
    // encodings are made once, see chatRequestBody).
    second.slice(0, 4).forEach((m, i) => expect(m).toBe(first[i]));
    expect(toModelMessages("be long", history)[0]).toEqual({ role: "system", content: "be long" });
  });
});
