import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/common/logger.js";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { LeaseRecord, SessionLeases } from "../../../src/session/session-leases.js";

const leases: SessionLeases[] = [];
afterEach(() => leases.splice(0).forEach((l) => l.close()));

function node(store: ReturnType<typeof createMemoryStore>, nodeId: string): SessionLeases {
  const l = new SessionLeases(store, silentLogger, { timeoutMs: 60_000, nodeId });
  leases.push(l);
  return l;
}

describe("SessionLeases: taking a lease back", () => {
  it("takes back, in one write, a lease this node released and no other node took since", async () => {
    const store = createMemoryStore();
    const a = node(store, "a");
    const first = await a.acquire("s1");
    expect(first).toEqual({ sessionId: "s1", token: 1 });
    await a.release(first);
    const back = await a.takeBack("s1", first.token);
    expect(back).toEqual({ sessionId: "s1", token: 2, previous: 1 });
    expect(await store.get(LeaseRecord, "s1")).toMatchObject({ node: "a", token: 2 });
    expect(a.size).toBe(1);
  });

  it("refuses when another node held the lease since, or the token is not the one left", async () => {
    const store = createMemoryStore();
    const a = node(store, "a");
    const b = node(store, "b");
    const mine = await a.acquire("s1");
    await a.release(mine);
    const theirs = await b.acquire("s1");
    expect(theirs.previous).toBeUndefined();
    await b.release(theirs);
    expect(await a.takeBack("s1", mine.token)).toBeUndefined();
    expect(await a.takeBack("s1", theirs.token)).toBeUndefined();
    // Nothing was written by the refused attempts: B's released lease stands.
    expect(await store.get(LeaseRecord, "s1")).toMatchObject({ node: "b", token: 2 });
    // Taken the long way, the lease reads as another node's: no `previous`.
    const again = await a.acquire("s1");
    expect(again).toEqual({ sessionId: "s1", token: 3, before: { token: 2, clean: false } });
  });

  it("names the token it followed when the lease read was this node's own", async () => {
    const store = createMemoryStore();
    const a = node(store, "a");
    const first = await a.acquire("s1");
    await a.release(first);
    expect(await a.acquire("s1")).toEqual({
      sessionId: "s1",
      token: 2,
      previous: 1,
      before: { token: 1, clean: false },
    });
    expect(await a.takeBack("missing", 1)).toBeUndefined();
  });
});

describe("SessionLeases: how the lease before was let go", () => {
  it("tells the next holder whether the one before let the lease go cleanly", async () => {
    const store = createMemoryStore();
    const a = node(store, "a");
    const b = node(store, "b");
    const first = await a.acquire("s1");
    expect(first.before).toBeUndefined(); // no node held it before
    await expect(b.acquire("s1")).rejects.toThrow(/served by another node/);
    await a.release(first, true);
    expect(await store.get(LeaseRecord, "s1")).toMatchObject({ node: "a", token: 1, clean: true });
    const taken = await b.acquire("s1");
    expect(taken.before).toEqual({ token: 1, clean: true });
    // Renewed or released without `clean`, the lease says nothing of the sort.
    await b.release(taken);
    expect((await store.get(LeaseRecord, "s1"))!.clean).toBeUndefined();
    expect((await a.acquire("s1")).before).toEqual({ token: 2, clean: false });
  });
});
