import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Usage } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { collect, type Harness, kind, startHarness } from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** What a scripted turn reports, as the scripted model's `usage` spells it. */
interface Reported {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
}

/** The usage Parkway should count for `turns` (the openai adapter's mapping, summed). */
function billed(...turns: Reported[]): Usage {
  return {
    inputTokens: turns.reduce((n, t) => n + t.prompt_tokens, 0),
    outputTokens: turns.reduce((n, t) => n + t.completion_tokens, 0),
    cacheReadTokens: turns.reduce((n, t) => n + t.cached_tokens, 0),
    cacheWriteTokens: 0,
  };
}

function replyEndUsage(events: ServerEvent[]): Usage | undefined {
  const end = events.find((e) => e.event?.$case === "replyEnd");
  return end?.event?.$case === "replyEnd" ? end.event.value.usage : undefined;
}

/** The sum of the MODEL_CALL_END usages among `events`. */
function modelCallsUsage(events: ServerEvent[]): Usage {
  const sum: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  for (const e of events) {
    if (e.event?.$case !== "modelCallEnd" || !e.event.value.usage) continue;
    const u = e.event.value.usage;
    sum.inputTokens += u.inputTokens;
    sum.outputTokens += u.outputTokens;
    sum.cacheReadTokens += u.cacheReadTokens;
    sum.cacheWriteTokens += u.cacheWriteTokens;
  }
  return sum;
}

describe("token usage", () => {
  it("counts a reply's model calls across its park, sums the session's replies, and keeps them through a restart", async () => {
    const t1: Reported = { prompt_tokens: 100, completion_tokens: 10, cached_tokens: 40 };
    const t2: Reported = { prompt_tokens: 200, completion_tokens: 20, cached_tokens: 80 };
    const t3: Reported = { prompt_tokens: 300, completion_tokens: 5, cached_tokens: 150 };
    const t4: Reported = { prompt_tokens: 50, completion_tokens: 7, cached_tokens: 0 };
    h = await startHarness({ turns: [{ text: "placeholder" }] });
    const session = await h.client.createSession({ agentId: "test" });
    expect(session.usage).toEqual(billed());
    const wd = session.workingDirectories[0]!;
    await writeFile(path.join(wd, "a.txt"), "alpha\n");
    await h.model.reset({
      turns: [
        // A read-only call runs at once; the Bash write asks, so the reply parks after two calls.
        { toolCalls: [{ name: "Read", input: { file_path: path.join(wd, "a.txt") } }], usage: t1 },
        { toolCalls: [{ name: "Bash", input: { command: "touch made.txt" } }], usage: t2 },
        { text: "Done.", usage: t3 },
        { text: "Second reply.", usage: t4 },
      ],
    });

    const chat = await h.client.attach(session.id);
    const before = await collect(chat.message("go"));
    expect(before.map(kind).slice(-2)).toEqual(["require_user_confirm", "reply_parked"]);
    const parked = await h.client.getSession(session.id);
    expect(parked.pendingToolCalls).toHaveLength(1);
    expect(parked.usage).toEqual(billed(t1, t2));
    chat.close();

    // A parked reply's usage so far is read back from its stored checkpoint.
    await h.restart();
    const reloaded = await h.client.getSession(session.id);
    expect(reloaded.pendingToolCalls).toHaveLength(1);
    expect(reloaded.usage).toEqual(billed(t1, t2));

    const again = await h.client.attach(session.id, { afterSeq: reloaded.lastSeq });
    await again.confirm(reloaded.pendingToolCalls[0]!);
    const after = await collect(again.untilSettled());
    again.close();
    expect(after.map(kind).at(-1)).toBe("reply_end");
    // REPLY_END carries the whole reply's usage, the calls before the park included.
    expect(replyEndUsage(after)).toEqual(billed(t1, t2, t3));
    expect(modelCallsUsage([...before, ...after])).toEqual(billed(t1, t2, t3));
    expect((await h.client.getSession(session.id)).usage).toEqual(billed(t1, t2, t3));

    const second = await h.client.reply({
      sessionId: session.id,
      input: { $case: "userMessage", value: { text: "once more", content: [] } },
    });
    expect(second.message?.finishedReason).toBe(1);
    expect(second.message?.usage).toEqual(billed(t4));

    const total = billed(t1, t2, t3, t4);
    expect((await h.client.getSession(session.id)).usage).toEqual(total);
    const listed = await h.client.listSessions({ agentId: "test" });
    expect(listed.sessions.find((s) => s.id === session.id)?.usage).toEqual(total);

    await h.restart();
    expect((await h.client.getSession(session.id)).usage).toEqual(total);
    // Replayed from the log, each REPLY_END still carries its reply's usage.
    const replayed: ServerEvent[] = [];
    const tail = await h.client.attach(session.id, { afterSeq: 0 });
    for (;;) {
      const e = await tail.next(AbortSignal.timeout(10_000));
      if (!e) break;
      replayed.push(e);
      if (replayed.filter((x) => kind(x) === "reply_end").length === 2) break;
    }
    tail.close();
    const ends = replayed.filter((e) => e.event?.$case === "replyEnd");
    expect(ends.map((e) => replyEndUsage([e]))).toEqual([billed(t1, t2, t3), billed(t4)]);
  });
});
