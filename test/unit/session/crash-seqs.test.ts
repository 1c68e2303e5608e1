import { describe, expect, it } from "vitest";
import type { ModelStreamEvent } from "../../../src/model/model.js";
import { SessionRecord } from "../../../src/session/records.js";
import type { StoredEvent } from "../../../src/session/stored-event.js";
import { hang, respond, startCore, TENANT, type Turn } from "./core.js";

/** Streams a text delta, then nothing until aborted (a model stopped mid-reply). */
const textThenHang: Turn = (request) => {
  const rest = hang(request)[Symbol.asyncIterator]();
  let sent = false;
  return {
    [Symbol.asyncIterator]: () => ({
      next: (): Promise<IteratorResult<ModelStreamEvent>> => {
        if (sent) return rest.next();
        sent = true;
        return Promise.resolve({ value: { type: "text_delta", delta: "hello" }, done: false });
      },
    }),
  };
};

const isEnd = (e: StoredEvent) => e.body.type === "reply_end";

describe("seqs across a crash, with the model's stream shown before its write", () => {
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
