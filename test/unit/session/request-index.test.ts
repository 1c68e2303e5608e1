import { describe, expect, it } from "vitest";
import { RequestRecord, requestKey } from "../../../src/session/records.js";
import { RequestIndex } from "../../../src/session/request-index.js";
import { createMemoryStore } from "../../../src/store/index.js";

const record = (order: number) => ({
  appliedAt: new Date().toISOString(),
  kind: "user_message",
  digest: "d",
  order,
});

/** Waits until the index has read the store (its fill runs off the caller's path). */
async function filled(index: RequestIndex): Promise<void> {
  for (let i = 0; i < 200 && index.mayHold("never-recorded"); i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(index.mayHold("never-recorded")).toBe(false);
}

describe("RequestIndex", () => {
  it("starts complete for a session without ids: a new id needs no lookup", () => {
    const index = new RequestIndex(true);
    expect(index.mayHold("r1")).toBe(false);
    index.noted("r1", []);
    expect(index.mayHold("r1")).toBe(true);
  });

  it("reads the stored ids at the second lookup, keeping those noted meanwhile and since", async () => {
    const store = createMemoryStore();
    const batch = store.batch();
    for (const [i, id] of ["a", "b/with/slashes"].entries()) {
      batch.put(RequestRecord, requestKey("ses_1", id), record(i));
    }
    batch.put(RequestRecord, requestKey("ses_10", "other-session"), record(0));
    await batch.write();
    const index = new RequestIndex(false);
    expect(index.mayHold("anything")).toBe(true);
    // An id applied whose write has not landed yet: the read of the store does not have it.
    index.noted("in-flight", []);
    index.lookedUp(store, "ses_1");
    expect(index.mayHold("anything")).toBe(true); // one lookup reads nothing more
    index.lookedUp(store, "ses_1");
    await filled(index);
    for (const id of ["a", "b/with/slashes", "in-flight"]) expect(index.mayHold(id)).toBe(true);
    expect(index.mayHold("other-session")).toBe(false);
    // Recording a new id forgets the oldest: a lookup of the forgotten one finds it new.
    index.noted("c", ["a"]);
    expect(index.mayHold("a")).toBe(false);
    expect(index.mayHold("c")).toBe(true);
  });
});
