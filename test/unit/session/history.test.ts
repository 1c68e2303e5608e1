import { describe, expect, it } from "vitest";
import { MessageRecord } from "../../../src/session/records.js";
import type { StoredEvent } from "../../../src/session/stored-event.js";
import { MemoryStore } from "../../../src/store/memory-store.js";
import type { RangeOptions } from "../../../src/store/store.js";
import type { RecordType } from "../../../src/store/record.js";
import { respond, startCore, TENANT } from "./core.js";

/** A memory store that counts the message records its scans return. */
class CountingStore extends MemoryStore {
  messagesRead = 0;
  override async *entries<T>(type: RecordType<T>, options?: RangeOptions) {
    for await (const entry of super.entries(type, options)) {
      if (type === (MessageRecord as unknown)) this.messagesRead += 1;
      yield entry;
    }
  }
}

const ended = (e: StoredEvent) => e.body.type === "reply_end";

describe("a session's history", () => {
  it("is read from the store once, when the session comes into memory; what it writes is kept", async () => {
    const store = new CountingStore();
    const turns = [respond("one"), respond("two"), respond("three"), respond("four")];
    const core = await startCore(turns, store);
    const id = await core.session();
    const stream = new AbortController();
    // An attached stream keeps the session in memory between replies.
    const attached = await core.manager.attach(TENANT, id, 0, stream.signal);
    let after = 0;
    for (const text of ["a", "b", "c"]) {
      const applied = await core.manager.apply(TENANT, id, { kind: "user_message", text });
      await applied.settled;
      const events = await core.events(id, ended, after);
      after = events.at(-1)!.seq;
    }
    stream.abort();
    attached.detach();

    // Each request carries the whole history: user, assistant, user, assistant, user.
    const third = JSON.stringify(core.model.requests[2]!.messages);
    for (const said of ["one", "two"]) expect(third).toContain(said);
    // No message record read: the session wrote each one itself, and kept it.
    expect(store.messagesRead).toBe(0);

    // Out of memory and back: its next reply reads the history once, the new message included.
    expect(core.manager.liveActors).toBe(0);
    const fourth = await core.manager.apply(TENANT, id, { kind: "user_message", text: "d" });
    await fourth.settled;
    expect(store.messagesRead).toBe(7);
    const users = core.model.requests.map(
      (r) => r.messages.filter((m) => (m as { role: string }).role === "user").length,
    );
    expect(users).toEqual([1, 2, 3, 4]);
    expect(JSON.stringify(core.model.requests[3]!.messages)).toContain("three");
  });
});
