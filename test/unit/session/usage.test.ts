import { describe, expect, it } from "vitest";
import type { Usage } from "../../../src/agent/types.js";
import type { StoredEvent } from "../../../src/session/stored-event.js";
import { hang, respond, startCore, TENANT } from "./core.js";

const usage = (inputTokens: number, outputTokens: number, cacheReadTokens = 0): Usage => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens: 0,
});
const touch = { id: "m1", name: "Bash", input: { command: "touch parked.txt" } };
const ended = (e: StoredEvent) => e.body.type === "reply_end";

describe("token usage in the session core", () => {
  it("adds each finished reply's usage to the session once, and shows a parked reply's so far", async () => {
    const core = await startCore([
      respond("One.", [], usage(10, 1, 4)),
      respond("", [touch], usage(20, 2, 8)),
      respond("Done.", [], usage(30, 3)),
    ]);
    const id = await core.session();
    expect((await core.manager.get(TENANT, id)).usage).toEqual(usage(0, 0));
    const first = await core.manager.apply(TENANT, id, { kind: "user_message", text: "a" });
    await first.settled;
    expect((await core.manager.get(TENANT, id)).usage).toEqual(usage(10, 1, 4));

    const second = await core.manager.apply(TENANT, id, { kind: "user_message", text: "b" });
    expect((await second.settled)?.status).toBe("awaiting_permission");
    const parked = await core.manager.get(TENANT, id);
    expect(parked.usage).toEqual(usage(30, 3, 12));
    const resumed = await core.manager.apply(TENANT, id, {
      kind: "confirm",
      replyId: second.replyId!,
      answers: [
        { toolCallId: parked.pendingToolCalls[0]!.id, confirmed: true, rules: [], reason: "" },
      ],
    });
    await resumed.settled;
    let count = 0;
    const ends = (await core.events(id, (e) => ended(e) && ++count === 2)).filter(ended);
    expect(ends.map((e) => e.body.type === "reply_end" && e.body.usage)).toEqual([
      usage(10, 1, 4),
      usage(50, 5, 8),
    ]);
    expect((await core.manager.get(TENANT, id)).usage).toEqual(usage(60, 6, 12));
  });

  it("counts the calls before a crash once, when recovery ends the reply", async () => {
    const list = { id: "m1", name: "Bash", input: { command: "ls" } };
    const core = await startCore([respond("", [list], usage(7, 3)), hang]);
    const id = await core.session();
    await core.manager.apply(TENANT, id, { kind: "user_message", text: "go" });
    let calls = 0;
    const seen = await core.events(
      id,
      (e) =>
        e.body.type === "reply_parked" || (e.body.type === "model_call_start" && ++calls === 2),
    );
    expect(seen.at(-1)?.body.type).toBe("model_call_start");
    const crashed = core.store.snapshot(); // what the disk holds if the process dies now

    // Recovery ends the reply: its usage is the first call's, folded from the logged events.
    const after = await startCore([], crashed);
    const end = (await after.events(id, ended)).find(ended);
    expect(end?.body).toMatchObject({ finishedReason: "interrupted", usage: usage(7, 3) });
    expect((await after.manager.get(TENANT, id)).usage).toEqual(usage(7, 3));
  });
});
