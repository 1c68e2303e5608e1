import { describe, expect, it } from "vitest";
import { ReplyRecord, RunningRecord } from "../../../src/session/records.js";
import type { StoredEvent } from "../../../src/session/stored-event.js";
import { respond, startCore, TENANT } from "./core.js";

const touch = { id: "m1", name: "Bash", input: { command: "touch parked.txt" } };
const parkedOn = (e: StoredEvent) => e.body.type === "reply_parked";

/** Starts a reply that parks on one Bash call; returns the session, reply and call ids. */
async function parked(core: Awaited<ReturnType<typeof startCore>>) {
  const id = await core.session();
  const applied = await core.manager.apply(TENANT, id, { kind: "user_message", text: "go" });
  const events = await core.events(id, parkedOn);
  const ask = events.find((e) => e.body.type === "require_user_confirm");
  const callId = ask?.body.type === "require_user_confirm" ? ask.body.toolCalls[0]!.id : "";
  return { id, replyId: applied.replyId!, callId };
}

describe("answers to a parked reply in the session core", () => {
  it("refuses a bad answer whole, leaving the store exactly as it was", async () => {
    const core = await startCore([respond("", [touch])]);
    const { id, replyId, callId } = await parked(core);
    const before = await core.store.digest();

    const refused = await core.manager
      .apply(TENANT, id, {
        kind: "confirm",
        replyId,
        answers: [
          { toolCallId: callId, confirmed: true, rules: [], reason: "" },
          { toolCallId: "call_unknown", confirmed: true, rules: [], reason: "" },
        ],
      })
      .catch((e: unknown) => e);

    expect(refused).toMatchObject({ code: "not_found" });
    expect(String(refused)).toContain("call_unknown");
    expect(await core.store.digest()).toBe(before);
    const view = await core.manager.get(TENANT, id);
    expect(view.status).toBe("awaiting_permission");
    expect(view.pendingToolCalls.map((c) => c.id)).toEqual([callId]);
  });

  it("applies an answer only to the reply still stored as the session's (compare-and-set)", async () => {
    const core = await startCore([respond("", [touch])]);
    const { id, replyId, callId } = await parked(core);
    // A stream keeps the session's actor (its memory) loaded.
    const stream = new AbortController();
    const attached = await core.manager.attach(TENANT, id, 0, stream.signal);
    // Another writer replaced the session's reply behind this memory's back.
    const stored = await core.store.get(ReplyRecord, id);
    await core.store
      .batch()
      .put(ReplyRecord, id, { ...stored!, replyId: "reply_other" })
      .write();
    const writes = core.store.writes;

    const refused = await core.manager
      .apply(TENANT, id, {
        kind: "confirm",
        replyId,
        answers: [{ toolCallId: callId, confirmed: true, rules: [], reason: "" }],
      })
      .catch((e: unknown) => e);

    expect(refused).toMatchObject({ code: "aborted" });
    expect(String(refused)).toContain("the parked reply");
    expect(core.store.writes).toBe(writes); // nothing of the answer was written
    expect((await core.store.get(ReplyRecord, id))?.replyId).toBe("reply_other");
    expect(await core.store.get(RunningRecord, id)).toBeUndefined();
    expect(core.model.requests).toHaveLength(1); // the reply did not resume
    expect(core.store.failure).toBeUndefined(); // a conflict is not a storage failure
    stream.abort();
    await attached.items.return(undefined);
    attached.detach();
  });
});
