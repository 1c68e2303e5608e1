import { describe, expect, it } from "vitest";
import { EventRecord } from "../../../src/session/records.js";
import type { StoredEvent } from "../../../src/session/stored-event.js";
import { MemoryStore } from "../../../src/store/memory-store.js";
import type { RecordType } from "../../../src/store/record.js";
import type { StoreBatch, WriteOptions } from "../../../src/store/store.js";
import { respond, startCore, TENANT } from "./core.js";

/** A memory store that holds back the write storing a REPLY_END until `release` is called. */
class HeldEndStore extends MemoryStore {
  /** Resolves once a write of a REPLY_END is being held. */
  readonly holding: Promise<void>;
  private held!: () => void;
  private gate: Promise<void>;
  release!: () => void;

  constructor() {
    super();
    this.holding = new Promise((resolve) => (this.held = resolve));
    this.gate = new Promise((resolve) => (this.release = resolve));
  }

  override batch(): StoreBatch {
    const inner = super.batch();
    let ends = false;
    const hold = () => this.hold();
    const batch: StoreBatch = {
      put<T>(type: RecordType<T>, key: string, value: T) {
        if (type === (EventRecord as unknown)) {
          const { events } = value as { events: { body: { type: string } }[] };
          if (events.some((e) => e.body.type === "reply_end")) ends = true;
        }
        inner.put(type, key, value);
        return this;
      },
      del(type, key) {
        inner.del(type, key);
        return this;
      },
      check(type, key, holds, what) {
        inner.check(type, key, holds, what);
        return this;
      },
      checkField(type, key, field, expected, what) {
        inner.checkField(type, key, field, expected, what);
        return this;
      },
      get length() {
        return inner.length;
      },
      async write(options?: WriteOptions) {
        if (ends) await hold();
        return inner.write(options);
      },
    };
    return batch;
  }

  private hold(): Promise<void> {
    this.held();
    return this.gate;
  }
}

const ended = (e: StoredEvent) => e.body.type === "reply_end";

/** Lets the turns of the event loop run until `check` holds (at most `turns` of them). */
async function settles(check: () => boolean, turns = 100): Promise<boolean> {
  for (let i = 0; i < turns && !check(); i++) await new Promise((r) => setImmediate(r));
  return check();
}

describe("a session whose reply stopped running", () => {
  it("stays in memory until its last write is stored: a stream attached meanwhile gets the whole reply", async () => {
    const store = new HeldEndStore();
    const core = await startCore([respond("all of it")], store);
    const id = await core.session();
    const input = { kind: "user_message", text: "hi" } as const;
    const applied = await core.manager.apply(TENANT, id, input, { requestId: "r1" });

    // The reply has logged its end and stopped running; the write that stores the end waits.
    await store.holding;
    // A call that uses the session and lets it go (the same input again) leaves it in memory.
    const again = await core.manager.apply(TENANT, id, input, { requestId: "r1" });
    expect(again.duplicate).toBe(true);
    expect(core.manager.liveActors).toBe(1);
    // Read again from the store now, the session would still be running, its last events missing.
    const stream = core.events(id, ended);
    store.release();
    const events = await stream;
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)?.body.type).toBe("reply_end");
    const text = events.flatMap((e) => (e.body.type === "text_block_delta" ? [e.body.delta] : []));
    expect(text.join("")).toBe("all of it");
    await applied.settled;

    // Once written, with nothing else holding it, the actor leaves memory.
    expect(await settles(() => core.manager.liveActors === 0)).toBe(true);
    const view = await core.manager.get(TENANT, id);
    expect(view.status).toBe("idle");
  });
});
