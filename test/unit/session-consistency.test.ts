import { beforeEach, describe, expect, it } from "vitest";
import {
  DamagedSessionRecord,
  EventRecord,
  eventKey,
  MessageRecord,
  messageKey,
  type SessionData,
} from "../../src/session/records.js";
import { readReplyAndProblem, sessionProblem } from "../../src/session/session-consistency.js";
import { createMemoryStore, type Store } from "../../src/store/index.js";

const at = "2026-11-01T00:00:00.000Z";
const id = "ses_consistency";

/** An idle session whose log holds events 1..2 in one chunk and whose history holds one message. */
const session: SessionData = {
  id,
  tenant: "default",
  agentId: "test",
  status: "idle",
  workingDirectories: [],
  externalTools: [],
  createdAt: at,
  updatedAt: at,
  lastSeq: 2,
  messageCount: 1,
};

const event = (seq: number) => ({
  id: `evt_${seq}`,
  seq,
  replyId: "reply_1",
  createdAt: at,
  body: { type: "text_block_delta", blockId: "b1", delta: "hi" },
});

async function seed(store: Store): Promise<void> {
  await store
    .batch()
    .put(EventRecord, eventKey(id, 2), { events: [event(1), event(2)] })
    .put(MessageRecord, messageKey(id, 0), {
      id: "msg_1",
      role: "user",
      name: "user",
      content: [],
      createdAt: at,
    })
    .write();
}

/**
 * The store with its reads counted: how many were under way at once at most, and every range read
 * of events failing with `fail` when it is set.
 */
function watched(store: Store): Store & { most: number; fail?: Error } {
  let now = 0;
  const w = { most: 0, fail: undefined as Error | undefined };
  const begin = () => (w.most = Math.max(w.most, ++now));
  const range =
    (name: "entries" | "keys") =>
    (...args: unknown[]) =>
      (async function* () {
        begin();
        try {
          await Promise.resolve();
          if (w.fail && args[0] === EventRecord) throw w.fail;
          yield* (store[name] as (...a: unknown[]) => AsyncIterable<unknown>)(...args);
        } finally {
          now--;
        }
      })();
  const proxy = new Proxy(store, {
    get(target, prop) {
      if (prop === "get") {
        return async (...args: unknown[]) => {
          begin();
          try {
            await Promise.resolve();
            return await (target.get as (...a: unknown[]) => Promise<unknown>)(...args);
          } finally {
            now--;
          }
        };
      }
      if (prop === "entries" || prop === "keys") return range(prop);
      if (prop === "most") return w.most;
      if (prop === "fail") return w.fail;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? (value as () => unknown).bind(target) : value;
    },
    set(_target, prop, value) {
      if (prop === "fail") w.fail = value as Error;
      return true;
    },
  });
  return proxy as Store & { most: number; fail?: Error };
}

describe("a session's records read together", () => {
  let store: ReturnType<typeof watched>;

  beforeEach(async () => {
    const memory = createMemoryStore();
    await memory.open();
    await seed(memory);
    store = watched(memory);
  });

  it("finds nothing wrong with records that agree, and reads the reply with them", async () => {
    await expect(readReplyAndProblem(store, session)).resolves.toEqual({
      reply: undefined,
      problem: undefined,
    });
  });

  it("issues the reply's, the mark's, the events' and the last message's reads at once", async () => {
    await readReplyAndProblem(store, session);
    // The reply, the repair mark, the last event's key, the first events, the last message.
    expect(store.most).toBe(5);
  });

  it("names the missing last history message", async () => {
    const { problem } = await readReplyAndProblem(store, { ...session, messageCount: 2 });
    expect(problem).toBe("history message 1 is missing");
  });

  it("names an event stored after the session's last seq", async () => {
    const { problem } = await readReplyAndProblem(store, { ...session, lastSeq: 1 });
    expect(problem).toBe("event 2 is stored, after the session's last seq 1");
  });

  it("names events missing below the last seq", async () => {
    const { problem } = await readReplyAndProblem(store, { ...session, lastSeq: 4 });
    expect(problem).toBe("events 3..4 are missing below its last seq 4");
  });

  it("finds a gap past the first chunk of events only in a full check", async () => {
    await store
      .batch()
      .put(EventRecord, eventKey(id, 5), { events: [event(4), event(5)] })
      .write();
    const gapped = { ...session, lastSeq: 5 };
    await expect(readReplyAndProblem(store, gapped)).resolves.toEqual({
      reply: undefined,
      problem: undefined,
    });
    await expect(sessionProblem(store, gapped, undefined, { full: true })).resolves.toBe(
      "event 3 is missing below its last seq",
    );
  });

  it("reports a repair mark before a read that failed after it was issued", async () => {
    await store
      .batch()
      .put(DamagedSessionRecord, id, { problem: "marked by parkway repair", at })
      .write();
    store.fail = new Error("the events cannot be read");
    const { problem } = await readReplyAndProblem(store, session);
    expect(problem).toBe("marked by parkway repair");
  });

  it("throws a failed read where its check comes", async () => {
    store.fail = new Error("the events cannot be read");
    await expect(readReplyAndProblem(store, session)).rejects.toThrow("the events cannot be read");
  });
});
