import { describe, expect, it } from "vitest";
import { EventLog } from "../../../src/session/event-log.js";
import { SessionRecord } from "../../../src/session/records.js";
import { VISIBLE_AHEAD } from "../../../src/session/seq-epoch.js";
import type { StoredEvent } from "../../../src/session/stored-event.js";
import type { MemoryStore } from "../../../src/store/memory-store.js";
import { respond, startCore, TENANT } from "./core.js";

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
    // Its REPLY_START may have been seen before the crash lost what followed: the seqs after the
    // restart skip past anything a stream could have been given.
    expect(events.map((e) => e.seq)).toEqual([1, 1 + VISIBLE_AHEAD + 1]);
    expect((await after.store.get(SessionRecord, id))?.skippedSeqs).toEqual([
      [2, 1 + VISIBLE_AHEAD],
    ]);
  });

  it("shows what changes state only once written, however slow the store; a reply's start and the model's stream may go ahead", async () => {
    const core = await startCore([respond("hello", [touch])]);
    const id = await core.session();
    core.store.delayWrites(30);
    const stream = new AbortController();
    const attached = await core.manager.attach(TENANT, id, 0, stream.signal);
    // What the store held at the moment each event reached the stream.
    const seen: { event: StoredEvent; held: MemoryStore }[] = [];
    const reading = (async () => {
      for await (const items of attached.items) {
        for (const item of items) {
          if (item.kind !== "event") continue;
          seen.push({ event: item.event, held: core.store.snapshot() });
          if (item.event.body.type === "reply_parked") return;
        }
      }
    })();
    await core.manager.apply(TENANT, id, { kind: "user_message", text: "go" });
    await reading;
    const early = new Set(["reply_start", "model_call_start", "model_call_end"]);
    for (const t of ["start", "delta", "end"]) {
      early.add(`text_block_${t}`);
      early.add(`tool_call_${t}`);
    }
    const ahead = new Set<string>();
    for (const { event, held } of seen) {
      const stored: number[] = [];
      for await (const e of new EventLog(held, id, 0).read(0, 1000)) stored.push(e.seq);
      if (!early.has(event.body.type)) expect(stored, event.body.type).toContain(event.seq);
      else if (!stored.includes(event.seq)) ahead.add(event.body.type);
    }
    expect(seen.map((s) => s.event.seq)).toEqual(seen.map((_, i) => i + 1));
    expect(seen.map((s) => s.event.body.type)).toContain("require_user_confirm");
    // The model's events went out only once the reply's start was stored (the session running).
    const startSeq = seen.find((x) => x.event.body.type === "reply_start")!.event.seq;
    for (const { event, held } of seen) {
      if (event.body.type === "reply_start") continue;
      const stored: number[] = [];
      for await (const e of new EventLog(held, id, 0).read(0, 1000)) stored.push(e.seq);
      expect(stored, event.body.type).toContain(startSeq);
    }
    // The reply's start and the model's text went out before their writes.
    expect([...ahead]).toEqual(expect.arrayContaining(["reply_start", "text_block_delta"]));
    stream.abort();
    await attached.items.return(undefined);
    attached.detach();
  });
});
