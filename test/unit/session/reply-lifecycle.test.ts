import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../../../src/session/stored-event.js";
import { hang, respond, startCore, TENANT } from "./core.js";

/**
 * The session core driven directly, without a socket: a fake model in the process and the in-memory
 * store. Each test runs in milliseconds.
 */
const is =
  (...types: string[]) =>
  (e: StoredEvent) =>
    types.includes(e.body.type);
const types = (events: StoredEvent[]) => events.map((e) => e.body.type);
const count = (events: StoredEvent[], type: string) =>
  types(events).filter((t) => t === type).length;

const touch = { id: "m1", name: "Bash", input: { command: "touch parked.txt" } };

describe("a reply in the session core", () => {
  it("parks on a call that asks, resumes on the confirmation, and ends once", async () => {
    const core = await startCore([respond("Creating it.", [touch]), respond("Done.")]);
    const id = await core.session();
    const applied = await core.manager.apply(TENANT, id, { kind: "user_message", text: "go" });
    const parked = await core.events(id, is("reply_parked"));
    const ask = parked.find(is("require_user_confirm"));
    expect(ask?.body.type === "require_user_confirm" && ask.body.toolCalls[0]?.name).toBe("Bash");
    expect((await applied.settled)?.status).toBe("awaiting_permission");
    const callId = ask?.body.type === "require_user_confirm" ? ask.body.toolCalls[0]!.id : "";

    const resumed = await core.manager.apply(TENANT, id, {
      kind: "confirm",
      replyId: applied.replyId!,
      answers: [{ toolCallId: callId, confirmed: true, rules: [], reason: "" }],
    });
    await resumed.settled;
    const all = await core.events(id, is("reply_end"));
    expect(count(all, "reply_start")).toBe(1);
    expect(count(all, "reply_end")).toBe(1);
    expect(all.at(-1)?.body).toMatchObject({ type: "reply_end", finishedReason: "completed" });
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1)); // gap-free from 1
    // The model saw the tool's result after the confirmation.
    expect(core.model.requests).toHaveLength(2);
    expect(JSON.stringify(core.model.requests[1]!.messages)).toContain("tool");
  });

  it("ends with one REPLY_END(interrupted) when interrupted while running and while parked", async () => {
    const core = await startCore([hang, respond("", [touch])]);
    const running = await core.session();
    const first = await core.manager.apply(TENANT, running, { kind: "user_message", text: "go" });
    await core.events(running, is("model_call_start"));
    await core.manager.apply(TENANT, running, { kind: "user_interrupt", replyId: first.replyId! });
    await first.settled;
    const a = await core.events(running, is("reply_end"));
    expect(count(a, "reply_end")).toBe(1);
    expect(a.at(-1)?.body).toMatchObject({ finishedReason: "interrupted" });

    const parked = await core.session();
    const second = await core.manager.apply(TENANT, parked, { kind: "user_message", text: "go" });
    expect((await second.settled)?.status).toBe("awaiting_permission");
    const stop = await core.manager.apply(TENANT, parked, {
      kind: "user_interrupt",
      replyId: second.replyId!,
    });
    await stop.settled;
    const b = await core.events(parked, is("reply_end"));
    expect(count(b, "reply_end")).toBe(1);
    expect(b.at(-1)?.body).toMatchObject({ finishedReason: "interrupted" });
  });

  it("recovers a reply that was running when the process died, from a snapshot of the store", async () => {
    const core = await startCore([hang]);
    const id = await core.session();
    await core.manager.apply(TENANT, id, { kind: "user_message", text: "go" });
    await core.events(id, is("model_call_start"));
    const crashed = core.store.snapshot(); // what the disk holds if the process dies now

    const after = await startCore([], crashed);
    const events = await after.events(id, is("reply_end"));
    expect(count(events, "reply_start")).toBe(1);
    expect(events.at(-1)?.body).toMatchObject({
      type: "reply_end",
      finishedReason: "interrupted",
    });
    expect(after.manager.liveActors).toBe(0);
  });

  it("syncs the park before REQUIRE_USER_CONFIRM is visible, and nothing of a text reply", async () => {
    const core = await startCore([respond("Just text."), respond("", [touch])]);
    const id = await core.session();
    const before = { ...core.store.writes };
    const text = await core.manager.apply(TENANT, id, { kind: "user_message", text: "hi" });
    await text.settled;
    const afterText = { ...core.store.writes };
    const seqAfterText = (await core.manager.get(TENANT, id)).lastSeq;
    expect(afterText.applied - before.applied).toBeGreaterThan(1);
    // DESIGN requires a synced write only for the transition to parked.
    expect(afterText.synced).toBe(before.synced);

    core.store.delayWrites(5);
    const parked = await core.manager.apply(TENANT, id, { kind: "user_message", text: "park" });
    let syncedWhenVisible = -1;
    const events = await core.events(
      id,
      (e) => {
        if (e.body.type === "require_user_confirm") syncedWhenVisible = core.store.writes.synced;
        return e.body.type === "reply_parked";
      },
      seqAfterText,
    );
    await parked.settled;
    expect(events.some(is("require_user_confirm"))).toBe(true);
    expect(syncedWhenVisible).toBeGreaterThan(afterText.synced);
  });

  it("keeps no actor in memory once a reply settles with no stream attached", async () => {
    const core = await startCore([respond("One."), respond("", [touch])]);
    const ids = [await core.session(), await core.session()];
    const done = await core.manager.apply(TENANT, ids[0]!, { kind: "user_message", text: "a" });
    const parked = await core.manager.apply(TENANT, ids[1]!, { kind: "user_message", text: "b" });
    await done.settled;
    await parked.settled;
    await new Promise((resolve) => setImmediate(resolve));
    expect(core.manager.liveActors).toBe(0);
  });
});
