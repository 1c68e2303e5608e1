import { describe, expect, it } from "vitest";
import { SessionRecord } from "../../../src/session/records.js";
import type { StoredEvent } from "../../../src/session/stored-event.js";
import { hang, respond, startCore, TENANT, textThenHang } from "./core.js";

const isEnd = (e: StoredEvent) => e.body.type === "reply_end";

describe("seqs across a crash, with a reply's start and the model's stream shown before their writes", () => {
  it("never gives a seq a stream saw to another event after a crash", async () => {
    const core = await startCore([textThenHang]);
    const id = await core.session();
    core.store.delayWrites(100);
    const stream = new AbortController();
    const attached = await core.manager.attach(TENANT, id, 0, stream.signal);
    const seen = new Map<number, string>();
    let crashed: ReturnType<typeof core.store.snapshot> | undefined;
    void core.manager.apply(TENANT, id, { kind: "user_message", text: "go" }).catch(() => {});
    for await (const items of attached.items) {
      const deltas = items.filter((i) => i.kind === "event");
      for (const item of deltas) seen.set(item.event.seq, item.event.id);
      if (deltas.some((i) => i.event.body.type === "text_block_delta")) {
        crashed = core.store.snapshot(); // the process dies here: the delta's write is not done
        break;
      }
    }
    stream.abort();
    attached.detach();
    const maxSeen = Math.max(...seen.keys());
    const storedNow = (await crashed!.get(SessionRecord, id))!.lastSeq;
    expect(storedNow).toBeLessThan(maxSeen); // the stream saw events the crash lost

    const after = await startCore([], crashed);
    // The client attaches after the last seq it saw: accepted, and the reply's end comes after it.
    const tail = await after.events(id, isEnd, maxSeen);
    expect(tail.at(-1)?.body).toMatchObject({ type: "reply_end", finishedReason: "interrupted" });
    for (const e of tail) expect(e.seq).toBeGreaterThan(maxSeen);
    // Every stored event a stream saw is the one it saw; no seq was used twice.
    const log = await after.events(id, isEnd);
    for (const e of log) {
      if (seen.has(e.seq)) expect(seen.get(e.seq)).toBe(e.id);
    }
    const record = (await after.store.get(SessionRecord, id))!;
    expect(record.skippedSeqs).toEqual([[storedNow + 1, expect.any(Number) as number]]);
    expect(record.skippedSeqs![0]![1]).toBeGreaterThanOrEqual(maxSeen);
  });

  it("skips one seq in a session stored as idle: the reply's start it may have shown", async () => {
    const core = await startCore([hang]);
    const id = await core.session();
    core.store.delayWrites(100);
    const stream = new AbortController();
    const attached = await core.manager.attach(TENANT, id, 0, stream.signal);
    void core.manager.apply(TENANT, id, { kind: "user_message", text: "go" }).catch(() => {});
    let shown: StoredEvent | undefined;
    let crashed: ReturnType<typeof core.store.snapshot> | undefined;
    for await (const items of attached.items) {
      const start = items.find((i) => i.kind === "event" && i.event.body.type === "reply_start");
      if (start?.kind !== "event") continue;
      shown = start.event;
      crashed = core.store.snapshot(); // the process dies before the reply's start is written
      break;
    }
    stream.abort();
    attached.detach();
    const stored = (await crashed!.get(SessionRecord, id))!;
    expect(stored.status).toBe("idle");
    expect(stored.lastSeq).toBe(shown!.seq - 1);

    const after = await startCore([respond("again")], crashed);
    const applied = await after.manager.apply(TENANT, id, { kind: "user_message", text: "b" });
    await applied.settled;
    const log = await after.events(id, isEnd);
    expect(log[0]!.body.type).toBe("reply_start");
    expect(log[0]!.seq).toBe(shown!.seq + 1); // past the one shown, and no further
    const record = (await after.store.get(SessionRecord, id))!;
    expect(record.skippedSeqs).toEqual([[shown!.seq, shown!.seq]]);
  });

  it("skips nothing in a session stored as parked: nothing goes out before an answer's write", async () => {
    const touch = { id: "c1", name: "Bash", input: { command: "touch parked.txt" } };
    const core = await startCore([respond("", [touch])]);
    const id = await core.session();
    await core.manager.apply(TENANT, id, { kind: "user_message", text: "go" });
    const parked = await core.events(id, (e) => e.body.type === "reply_parked");
    const crashed = core.store.snapshot(); // a crash while parked
    expect((await crashed.get(SessionRecord, id))!.status).toBe("awaiting_permission");

    const after = await startCore([], crashed);
    const again = await after.events(id, (e) => e.body.type === "require_user_confirm");
    const seqs = [...parked, ...again.filter((e) => e.seq > parked.at(-1)!.seq)].map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect((await after.store.get(SessionRecord, id))?.skippedSeqs).toBeUndefined();
  });

  it("keeps seqs gap-free across a clean stop", async () => {
    const core = await startCore([respond("one")]);
    const id = await core.session();
    const first = await core.manager.apply(TENANT, id, { kind: "user_message", text: "a" });
    await first.settled;
    await core.manager.stop();
    const after = await startCore([respond("two")], core.store.snapshot());
    const second = await after.manager.apply(TENANT, id, { kind: "user_message", text: "b" });
    await second.settled;
    const firstEnd = await after.events(id, isEnd);
    const log = await after.events(id, isEnd, firstEnd.at(-1)!.seq);
    const seqs = [...firstEnd, ...log].map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect((await after.store.get(SessionRecord, id))?.skippedSeqs).toBeUndefined();
  });
});
