import { afterAll, describe, expect, it } from "vitest";
import type { EventBody } from "../../src/agent/events.js";
import type { Msg } from "../../src/agent/types.js";
import { EventLog } from "../../src/session/event-log.js";
import {
  EventRecord,
  ReplyRecord,
  SessionRecord,
  type ReplyData,
} from "../../src/session/records.js";
import { ConflictError, MemoryStore, StorageFailure, type Store } from "../../src/store/index.js";
import { storeImplementations } from "../helpers/store-implementations.js";

/**
 * The session core's own operations, each as the core performs it through the Store interface,
 * checked on every implementation: append events with their seq, read a range of them and their
 * keys, checkpoint a reply with them in one synced batch, and compare-and-set a call's state.
 */
const { implementations, stop } = storeImplementations();
afterAll(stop);

const delta = (text: string): EventBody => ({
  type: "text_block_delta",
  blockId: "b1",
  delta: text,
});

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Appends `n` text deltas to the log and writes them as one chunk. */
async function appendAndWrite(store: Store, log: EventLog, n: number, from: number) {
  for (let i = 0; i < n; i++) log.append("reply_1", delta(`d${from + i}`));
  const batch = store.batch();
  log.putInto(batch, log.drainPending());
  await batch.write();
}

function parkedReply(state: "asking" | "allowed"): ReplyData {
  const message: Msg = {
    id: "msg_1",
    role: "assistant",
    name: "agent",
    createdAt: "2026-12-03T00:00:00.000Z",
    content: [{ type: "tool_call", id: "call_1", name: "Bash", input: '{"command":"ls"}', state }],
  };
  return {
    replyId: "reply_1",
    message,
    iteration: 1,
    state: "parked",
    startedAt: "2026-12-03T00:00:00.000Z",
    snapshotSeq: 3,
  };
}

const callState = (reply: ReplyData | undefined) => {
  const block = reply?.message.content[0];
  return block?.type === "tool_call" ? block.state : undefined;
};

describe.each(implementations)("the session's operations on a Store: %s", (_name, make) => {
  it("appends events with their seq and reads a range of them back in order, within the session", async () => {
    const { store } = await make();
    const log = new EventLog(store, "s1", 0);
    const neighbour = new EventLog(store, "s10", 0); // sorts right after "s1/"
    await appendAndWrite(store, log, 3, 1);
    await appendAndWrite(store, neighbour, 2, 1);
    await appendAndWrite(store, log, 2, 4);

    const reader = new EventLog(store, "s1", 5);
    const all = await collect(reader.read(0, 5));
    expect(all.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(all.map((e) => (e.body as { delta: string }).delta)).toEqual([
      "d1",
      "d2",
      "d3",
      "d4",
      "d5",
    ]);
    expect(new Set(all.map((e) => e.sessionId))).toEqual(new Set(["s1"]));
    // A range that starts and ends inside chunks.
    expect((await collect(reader.read(2, 4))).map((e) => e.seq)).toEqual([3, 4]);
    // Keys: the chunks wholly at or before the upper bound, with an event after the lower one.
    expect(await reader.chunkKeys(0, 5)).toEqual(["s1/000000000003", "s1/000000000005"]);
    expect(await reader.chunkKeys(3, 5)).toEqual(["s1/000000000005"]);
    expect(await reader.chunkKeys(0, 4)).toEqual(["s1/000000000003"]);
    await store.close();
  });

  it("checkpoints a reply with its events and the session's last seq in one synced batch that survives a reopen", async () => {
    const subject = await make();
    const { store } = subject;
    const session = {
      id: "s1",
      tenant: "t",
      agentId: "assistant",
      status: "awaiting_permission" as const,
      workingDirectories: [],
      externalTools: [],
      createdAt: "2026-12-03T00:00:00.000Z",
      updatedAt: "2026-12-03T00:00:00.000Z",
      lastSeq: 3,
      messageCount: 1,
      replyId: "reply_1",
    };
    const log = new EventLog(store, "s1", 0);
    for (let i = 1; i <= 3; i++) log.append("reply_1", delta(`d${i}`));
    const batch = store.batch();
    log.putInto(batch, log.drainPending());
    batch.put(ReplyRecord, "s1", parkedReply("asking")).put(SessionRecord, "s1", session);
    const syncedBefore = store instanceof MemoryStore ? store.writes.synced : 0;
    await batch.write({ sync: true });
    if (store instanceof MemoryStore) expect(store.writes.synced).toBe(syncedBefore + 1);

    const again = await subject.reopen();
    expect(callState(await again.get(ReplyRecord, "s1"))).toBe("asking");
    expect((await again.get(SessionRecord, "s1"))?.lastSeq).toBe(3);
    const events = await collect(new EventLog(again, "s1", 3).read(0, 3));
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3]);
    await again.close();
  });

  it("compare-and-sets a call's state: of two answers to one parked call, exactly one applies", async () => {
    const { store } = await make();
    await store.batch().put(ReplyRecord, "s1", parkedReply("asking")).write({ sync: true });
    // Each answer applies only to the reply still stored with the call still asking.
    const answer = () =>
      store
        .batch()
        .check(
          ReplyRecord,
          "s1",
          (r) => r?.replyId === "reply_1" && callState(r) === "asking",
          "call_1 awaiting confirmation",
        )
        .put(ReplyRecord, "s1", { ...parkedReply("allowed"), state: "running" })
        .write({ sync: true })
        .then(
          () => "applied",
          (err: unknown) => err,
        );
    const [first, second] = await Promise.all([answer(), answer()]);
    expect(first).toBe("applied");
    expect(second).toBeInstanceOf(ConflictError);
    expect((second as Error).message).toContain("call_1 awaiting confirmation");
    const stored = await store.get(ReplyRecord, "s1");
    expect(stored?.state).toBe("running");
    expect(callState(stored)).toBe("allowed");
    await store.close();
  });

  it("loses none of the events already stored when a later append fails", async () => {
    const subject = await make();
    const { store } = subject;
    const log = new EventLog(store, "s1", 0);
    await appendAndWrite(store, log, 2, 1);
    await subject.failNextWrite();
    const failed = await appendAndWrite(store, log, 2, 3).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(StorageFailure);
    const events = await collect(new EventLog(store, "s1", 4).read(0, 4));
    expect(events.map((e) => e.seq)).toEqual([1, 2]);
    expect(await collect(store.keys(EventRecord))).toEqual(["s1/000000000002"]);
    await store.close();
  });
});
