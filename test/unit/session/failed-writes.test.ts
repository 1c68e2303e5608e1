import { describe, expect, it } from "vitest";
import { EventLog } from "../../../src/session/event-log.js";
import type { StoredEvent } from "../../../src/session/stored-event.js";
import type { MemoryStore } from "../../../src/store/memory-store.js";
import { hang, respond, startCore, TENANT } from "./core.js";

const is =
  (...types: string[]) =>
  (e: StoredEvent) =>
    types.includes(e.body.type);

const touch = { id: "m1", name: "Bash", input: { command: "touch parked.txt" } };

describe("a failed write in the session core", () => {
  it("stops the session: the caller gets the failure, the store refuses inputs, and a restart recovers what was stored", async () => {
    const core = await startCore([respond("", [touch])]);
    const id = await core.session();
    // The write that would park the reply fails (the disk is full).
    core.store.delayWrites(1);
    const applied = await core.manager.apply(TENANT, id, { kind: "user_message", text: "go" });
    core.store.failNextWrite();
    const failed = await applied.settled!.catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: "unavailable" });
    expect(core.store.failure).toBeDefined();
    expect(core.manager.liveActors).toBe(0); // memory ahead of the store is dropped

    const refused = await core.manager
      .apply(TENANT, id, { kind: "user_message", text: "again" })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "unavailable" });

    // What the disk holds: the reply started and never parked; a restart ends it once.
    const after = await startCore([], core.store.snapshot());
    const events = await after.events(id, is("reply_end"));
    expect(events.filter(is("reply_start"))).toHaveLength(1);
    expect(events.filter(is("reply_parked", "require_user_confirm"))).toHaveLength(0);
    expect(events.at(-1)?.body).toMatchObject({ type: "reply_end", finishedReason: "interrupted" });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  });

  it("shows no event before its write completes, however slow the store", async () => {
    const core = await startCore([hang]);
    const id = await core.session();
    core.store.delayWrites(30);
    const stream = new AbortController();
    const attached = await core.manager.attach(TENANT, id, 0, stream.signal);
    // What the store held at the moment each event reached the stream.
    const seen: { seq: number; held: MemoryStore }[] = [];
    const reading = (async () => {
      for await (const items of attached.items) {
        for (const item of items) {
          if (item.kind !== "event") continue;
          seen.push({ seq: item.event.seq, held: core.store.snapshot() });
          if (item.event.body.type === "model_call_start") return;
        }
      }
    })();
    await core.manager.apply(TENANT, id, { kind: "user_message", text: "go" });
    await reading;
    expect(seen.length).toBeGreaterThan(1);
    for (const { seq, held } of seen) {
      const stored: number[] = [];
      for await (const e of new EventLog(held, id, 0).read(0, 1000)) stored.push(e.seq);
      expect(stored).toContain(seq);
    }
    stream.abort();
    await attached.items.return(undefined);
    attached.detach();
  });
});
