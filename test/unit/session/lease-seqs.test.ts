import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { SessionRecord } from "../../../src/session/records.js";
import { LeaseRecord } from "../../../src/session/session-leases.js";
import { VISIBLE_AHEAD } from "../../../src/session/seq-epoch.js";
import type { StoredEvent } from "../../../src/session/stored-event.js";
import { MemoryStore } from "../../../src/store/memory-store.js";
import { SignalBus } from "../../../src/store/signals.js";
import {
  type Core,
  FakeModel,
  respond,
  startCore,
  TENANT,
  textThenHang,
  type Turn,
} from "./core.js";

const isEnd = (e: StoredEvent) => e.body.type === "reply_end";
const LEASE_MS = 200;

/** A node on `store`, with short leases by default. */
function nodeOn(
  store: MemoryStore,
  turns: Turn[],
  bus = new SignalBus(),
  timeoutMs = LEASE_MS,
): Promise<Core> {
  return startCore([], store, {
    model: new FakeModel(turns),
    signals: bus.node(),
    leases: { timeoutMs },
  });
}

/** Reads a stream attached to `core` until `until` accepts an event; `each` sees every event. */
async function readUntil(
  core: Core,
  id: string,
  until: (e: StoredEvent) => boolean,
  each: (e: StoredEvent) => void,
): Promise<void> {
  const stream = new AbortController();
  const attached = await core.manager.attach(TENANT, id, 0, stream.signal);
  try {
    for await (const items of attached.items) {
      for (const item of items) {
        if (item.kind !== "event") continue;
        each(item.event);
        if (until(item.event)) return;
      }
    }
  } finally {
    stream.abort();
    attached.detach();
  }
}

describe("seqs with several nodes, the model's stream shown before its write", () => {
  it("never gives a seq a stream saw to another event after the node that showed it died", async () => {
    const store = new MemoryStore();
    const a = await nodeOn(store, [textThenHang]);
    const id = await a.session();
    store.delayWrites(100);
    const seen = new Map<number, string>();
    let crashed: MemoryStore | undefined;
    void a.manager.apply(TENANT, id, { kind: "user_message", text: "go" }).catch(() => {});
    await readUntil(
      a,
      id,
      (e) => e.body.type === "text_block_delta",
      (e) => {
        seen.set(e.seq, e.id);
        if (e.body.type !== "text_block_delta") return;
        crashed = store.snapshot(); // node A dies here: the delta's write is not done
      },
    );
    const maxSeen = Math.max(...seen.keys());
    const stored = (await crashed!.get(SessionRecord, id))!;
    expect(stored.lastSeq).toBeLessThan(maxSeen); // the stream saw the delta before its write
    expect(stored.status).toBe("running");
    expect(stored.leaseToken).toBe(1);

    // Node B on what A left: once A's lease expired, its recovery ends the reply past the seqs A
    // may have shown. A client that saw them attaches after the last one.
    const b = await nodeOn(crashed!, []);
    const tail = await b.events(id, isEnd, maxSeen);
    expect(tail.at(-1)?.body).toMatchObject({ type: "reply_end", finishedReason: "interrupted" });
    for (const e of tail) expect(e.seq).toBeGreaterThan(maxSeen);
    const log = await b.events(id, isEnd);
    for (const e of log) if (seen.has(e.seq)) expect(seen.get(e.seq)).toBe(e.id);
    const record = (await crashed!.get(SessionRecord, id))!;
    expect(record.skippedSeqs).toEqual([[stored.lastSeq + 1, stored.lastSeq + VISIBLE_AHEAD]]);
    expect(record.leaseToken).toBe(2);
  });

  it("keeps seqs gap-free when a node let the lease go cleanly, and shows a reply's start only once written", async () => {
    const store = new MemoryStore();
    const bus = new SignalBus();
    const a = await nodeOn(store, [respond("one")], bus);
    const b = await nodeOn(store, [respond("two")], bus);
    const id = await a.session();
    store.delayWrites(20);
    const log: StoredEvent[] = [];
    const storedAt = new Map<number, MemoryStore>();
    const watched = readUntil(
      b,
      id,
      (e) => isEnd(e) && log.filter(isEnd).length === 2,
      (e) => {
        log.push(e);
        if (e.body.type === "reply_start") storedAt.set(e.seq, store.snapshot());
      },
    );
    await (
      await a.manager.apply(TENANT, id, { kind: "user_message", text: "a" })
    ).settled;
    await sleep(LEASE_MS); // A lets the session go once its last write is done and it lingered
    expect(await store.get(LeaseRecord, id)).toMatchObject({ token: 1, clean: true });
    await (
      await b.manager.apply(TENANT, id, { kind: "user_message", text: "b" })
    ).settled;
    await watched;

    const seqs = log.map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect((await store.get(SessionRecord, id))?.skippedSeqs).toBeUndefined();
    expect((await store.get(LeaseRecord, id))?.token).toBe(2);
    // Each reply's start reached the stream once stored (a node shows nothing before its write).
    expect(storedAt.size).toBe(2);
    for (const [seq, then] of storedAt) {
      expect((await then.get(SessionRecord, id))!.lastSeq).toBeGreaterThanOrEqual(seq);
    }
  });

  it("attaches a stream on another node after a seq shown and not yet stored, within what may have been shown", async () => {
    const store = new MemoryStore();
    const bus = new SignalBus();
    // Leases that outlast the slow writes: A holds the session throughout.
    const a = await nodeOn(store, [textThenHang], bus, 10_000);
    const b = await nodeOn(store, [], bus, 10_000);
    const id = await a.session();
    store.delayWrites(50);
    const applied = await a.manager.apply(TENANT, id, { kind: "user_message", text: "go" });
    let delta: StoredEvent | undefined;
    let stored = 0;
    await readUntil(
      a,
      id,
      (e) => e.body.type === "text_block_delta",
      (e) => {
        if (e.body.type !== "text_block_delta") return;
        delta = e;
        void store
          .snapshot()
          .get(SessionRecord, id)
          .then((r) => (stored = r!.lastSeq));
      },
    );
    await sleep(0);
    expect(stored).toBeLessThan(delta!.seq); // shown on A before its write

    // Beyond what the session's holders may have shown: refused, naming the field.
    const beyond = b.manager.attach(
      TENANT,
      id,
      stored + VISIBLE_AHEAD + 1,
      AbortSignal.timeout(5000),
    );
    await expect(beyond).rejects.toThrow(/after_seq/);
    // After the delta seen on A: accepted on B, which goes on from there once A writes.
    const tail = b.events(id, isEnd, delta!.seq);
    await b.manager.apply(TENANT, id, { kind: "user_interrupt", replyId: applied.replyId! });
    const events = await tail;
    expect(events.at(-1)?.body).toMatchObject({ type: "reply_end", finishedReason: "interrupted" });
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => delta!.seq + 1 + i));
  });

  it("keeps the lease a while after a reply: the next input there writes no lease, another node's is forwarded", async () => {
    const store = new MemoryStore();
    const bus = new SignalBus();
    const a = await nodeOn(store, [respond("one"), respond("two"), respond("three")], bus, 4000);
    const b = await nodeOn(store, [], bus, 4000);
    const id = await a.session();
    await (
      await a.manager.apply(TENANT, id, { kind: "user_message", text: "a" })
    ).settled;
    await sleep(50); // the actor is let go idle meanwhile
    const first = await store.get(LeaseRecord, id);
    await (
      await a.manager.apply(TENANT, id, { kind: "user_message", text: "b" })
    ).settled;
    // The same lease, not released and taken back in between.
    expect(await store.get(LeaseRecord, id)).toEqual(first);
    // Another node's input meanwhile goes to the node that holds the lease.
    await (
      await b.manager.apply(TENANT, id, { kind: "user_message", text: "c" })
    ).settled;
    expect(b.manager.liveActors).toBe(0);
    expect((await store.get(LeaseRecord, id))?.token).toBe(first!.token);
    let ends = 0;
    const log = await b.events(id, (e) => isEnd(e) && ++ends === 3);
    const seqs = log.map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    // Its time up, the lease is let go cleanly.
    await sleep(1200);
    expect(await store.get(LeaseRecord, id)).toMatchObject({ token: first!.token, clean: true });
  });
});
