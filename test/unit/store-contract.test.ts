import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  ConflictError,
  createMemoryStore,
  defineRecord,
  RecordError,
  StorageFailure,
  StoreClosedError,
} from "../../src/store/index.js";
import { storeImplementations } from "../helpers/store-implementations.js";

/**
 * What the session core relies on from a store, checked on every implementation: the LevelDB store,
 * the in-memory one and the PostgreSQL one (on a temporary cluster, a database per test). Each
 * implementation brings a way to make its next write fail. The session's own operations on these
 * are checked in store-session-operations.test.ts.
 */
const Note = defineRecord({ kind: "note", version: 1, schema: z.object({ text: z.string() }) });
const Tag = defineRecord({ kind: "tag", version: 1, schema: z.object({ n: z.number().int() }) });

const { implementations, stop } = storeImplementations();
afterAll(stop);

const note = (text: string) => ({ text });

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe.each(implementations)("the Store contract: %s", (_name, make) => {
  it("reads back what a batch wrote, and nothing for a key never written", async () => {
    const { store } = await make();
    await store.batch().put(Note, "a", note("one")).put(Tag, "a", { n: 1 }).write();
    expect(await store.get(Note, "a")).toEqual(note("one"));
    expect(await store.get(Tag, "a")).toEqual({ n: 1 });
    expect(await store.get(Note, "missing")).toBeUndefined();
    expect(await store.getMany(Note, ["missing", "a"])).toEqual([undefined, note("one")]);
    await store.close();
  });

  it("applies a batch across kinds all together, deletions included", async () => {
    const { store } = await make();
    await store.batch().put(Note, "a", note("one")).put(Note, "b", note("two")).write();
    const batch = store.batch().del(Note, "a").put(Tag, "t", { n: 2 }).put(Note, "b", note("2"));
    expect(batch.length).toBe(3);
    await batch.write({ sync: true });
    expect(await collect(store.entries(Note))).toEqual([["b", note("2")]]);
    expect(await store.get(Tag, "t")).toEqual({ n: 2 });
    await store.close();
  });

  it("refuses an invalid record when it is put, so nothing of its batch is written", async () => {
    const { store } = await make();
    const before = await store.digest();
    const batch = store.batch().put(Note, "ok", note("fine"));
    expect(() => batch.put(Tag, "bad", { n: 1.5 })).toThrow(RecordError);
    expect(await store.digest()).toBe(before);
    await store.close();
  });

  it("applies writes in the order they were issued", async () => {
    const { store } = await make();
    const writes = Array.from({ length: 20 }, (_, i) =>
      store
        .batch()
        .put(Note, "k", note(String(i)))
        .write({ sync: i % 5 === 0 }),
    );
    await Promise.all(writes);
    expect(await store.get(Note, "k")).toEqual(note("19"));
    await store.close();
  });

  it("writes a checked batch when its check holds", async () => {
    const { store } = await make();
    await store.batch().put(Tag, "call", { n: 1 }).write();
    const seen: ({ n: number } | undefined)[] = [];
    const batch = store
      .batch()
      .check(Tag, "call", (c) => (seen.push(c), c?.n === 1), "call at step 1")
      .put(Tag, "call", { n: 2 })
      .put(Note, "log", note("step 2"));
    expect(batch.length).toBe(2);
    await batch.write({ sync: true });
    expect(seen).toEqual([{ n: 1 }]);
    expect(await store.get(Tag, "call")).toEqual({ n: 2 });
    expect(await store.get(Note, "log")).toEqual(note("step 2"));
    await store.close();
  });

  it("writes nothing of a batch whose check fails, rejects with a ConflictError and stays usable", async () => {
    const { store } = await make();
    await store.batch().put(Tag, "call", { n: 2 }).write();
    const told: StorageFailure[] = [];
    store.onFailure((f) => told.push(f));
    const before = await store.digest();
    const error = await store
      .batch()
      .put(Note, "log", note("lost"))
      .check(Tag, "call", (c) => c?.n === 1, "call at step 1")
      .put(Tag, "call", { n: 3 })
      .write({ sync: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    const conflict = error as ConflictError;
    expect(conflict.code).toBe("aborted");
    expect(conflict.key).toBe("call");
    expect(conflict.message).toContain('"call"');
    expect(conflict.message).toContain("call at step 1");
    expect(await store.digest()).toBe(before);
    expect(await store.get(Note, "log")).toBeUndefined();
    expect(store.failure).toBeUndefined();
    expect(told).toEqual([]);
    await store.batch().put(Note, "later", note("later")).write({ sync: true });
    expect(await store.get(Note, "later")).toEqual(note("later"));
    await store.close();
  });

  it("checks against the writes issued before, applied or not yet, and not against a refused one", async () => {
    const { store } = await make();
    // Issued back to back: the first is being written while the others wait and are joined.
    const first = store.batch().put(Tag, "k", { n: 1 }).write();
    const second = store.batch().put(Tag, "k", { n: 2 }).write();
    const third = store
      .batch()
      .check(Tag, "k", (c) => c?.n === 2, "k at 2")
      .put(Tag, "k", { n: 3 })
      .write();
    const refused = store
      .batch()
      .check(Tag, "k", (c) => c?.n === 2, "k still at 2")
      .put(Tag, "k", { n: 99 })
      .put(Note, "refused", note("no"))
      .write()
      .catch((e: unknown) => e);
    const fourth = store
      .batch()
      .check(Tag, "k", (c) => c?.n === 3, "k at 3")
      .put(Tag, "k", { n: 4 })
      .write();
    await Promise.all([first, second, third, fourth]);
    expect(await refused).toBeInstanceOf(ConflictError);
    expect(await store.get(Tag, "k")).toEqual({ n: 4 });
    expect(await store.get(Note, "refused")).toBeUndefined();
    expect(store.failure).toBeUndefined();
    await store.close();
  });

  it("checks one field of a record, older versions read through their migrations", async () => {
    const { store } = await make();
    // The same kind at version 1 (a name), and at version 2 (a label and a count).
    const Old = defineRecord({ kind: "card", version: 1, schema: z.object({ name: z.string() }) });
    const Card = defineRecord({
      kind: "card",
      version: 2,
      schema: z.object({ label: z.string(), count: z.number().int() }),
      migrations: { 1: (d) => ({ label: (d as { name: string }).name, count: 0 }) },
    });
    // Written by a looser reader of version 2: the count is no integer, which Card refuses.
    const Loose = defineRecord({
      kind: "card",
      version: 2,
      schema: z.object({ label: z.string(), count: z.number() }),
    });
    await store
      .batch()
      .put(Old, "old", { name: "first" })
      .put(Loose, "odd", { label: "x", count: 1.5 })
      .write();
    await store
      .batch()
      .checkField(Card, "old", "label", "first", "old labelled first")
      .checkField(Card, "odd", "label", "x", "odd labelled x")
      .checkField(Card, "none", "label", undefined, "none absent")
      .put(Note, "checked", note("yes"))
      .write({ sync: true });
    expect(await store.get(Note, "checked")).toEqual(note("yes"));
    const refused = await store
      .batch()
      .checkField(Card, "old", "label", "second", "old labelled second")
      .put(Note, "refused", note("no"))
      .write()
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConflictError);
    expect((refused as ConflictError).message).toContain("old labelled second");
    const absent = await store
      .batch()
      .checkField(Card, "none", "label", "first", "none labelled first")
      .put(Note, "refused", note("no"))
      .write()
      .catch((e: unknown) => e);
    expect(absent).toBeInstanceOf(ConflictError);
    // The whole record is validated by `check`, not by `checkField`.
    const invalid = await store
      .batch()
      .check(Card, "odd", (c) => c?.label === "x", "odd labelled x")
      .write()
      .catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(RecordError);
    expect(await store.get(Note, "refused")).toBeUndefined();
    expect(store.failure).toBeUndefined();
    await store.close();
  });

  it("checks a key never written as undefined, before the batch's own writes", async () => {
    const { store } = await make();
    await store
      .batch()
      .put(Note, "new", note("created"))
      .check(Note, "new", (c) => c === undefined, "new not created yet")
      .write();
    expect(await store.get(Note, "new")).toEqual(note("created"));
    const again = await store
      .batch()
      .check(Note, "new", (c) => c === undefined, "new not created yet")
      .put(Note, "new", note("again"))
      .write()
      .catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ConflictError);
    expect(await store.get(Note, "new")).toEqual(note("created"));
    await store.close();
  });

  it("rejects only its own batch when a check throws or a batch holds checks alone", async () => {
    const { store } = await make();
    const boom = new Error("boom");
    const thrown = store
      .batch()
      .check(
        Note,
        "a",
        () => {
          throw boom;
        },
        "never",
      )
      .put(Note, "a", note("lost"))
      .write()
      .catch((e: unknown) => e);
    const after = store.batch().put(Note, "b", note("kept")).write();
    const checkOnly = store
      .batch()
      .check(Note, "b", (c) => c?.text === "kept", "b kept")
      .write();
    const checkOnlyRefused = store
      .batch()
      .check(Note, "a", (c) => c !== undefined, "a written")
      .write()
      .catch((e: unknown) => e);
    expect(await thrown).toBe(boom);
    await after;
    await checkOnly;
    expect(await checkOnlyRefused).toBeInstanceOf(ConflictError);
    expect(await store.get(Note, "a")).toBeUndefined();
    expect(await store.get(Note, "b")).toEqual(note("kept"));
    expect(store.failure).toBeUndefined();
    await store.close();
  });

  it("takes the writes issued right after a refused batch that was the only one waiting", async () => {
    const { store } = await make();
    const refused = store
      .batch()
      .check(Note, "x", () => false, "never")
      .put(Note, "x", note("lost"))
      .write()
      .catch((e: unknown) => e);
    const next = store.batch().put(Note, "y", note("y")).write();
    const last = store.batch().put(Note, "z", note("z")).write({ sync: true });
    await Promise.all([next, last]);
    expect(await refused).toBeInstanceOf(ConflictError);
    expect(await collect(store.keys(Note))).toEqual(["y", "z"]);
    await store.close();
  });

  it("scans one kind in bytewise key order within bounds, forwards and backwards", async () => {
    const { store } = await make();
    const batch = store.batch();
    for (const key of ["b", "a", "c1", "c", "é", "Z", "d"]) batch.put(Note, key, note(key));
    batch.put(Tag, "b", { n: 0 });
    await batch.write();
    expect(await collect(store.keys(Note))).toEqual(["Z", "a", "b", "c", "c1", "d", "é"]);
    expect(await collect(store.keys(Note, { gt: "a", lte: "c1" }))).toEqual(["b", "c", "c1"]);
    expect(await collect(store.keys(Note, { gte: "c", lt: "d" }))).toEqual(["c", "c1"]);
    expect(await collect(store.keys(Note, { reverse: true, limit: 2 }))).toEqual(["é", "d"]);
    expect(await collect(store.keys(Note, { gte: "b", reverse: true, limit: 3 }))).toEqual([
      "é",
      "d",
      "c1",
    ]);
    expect((await collect(store.entries(Note, { lt: "b" }))).map(([k, v]) => [k, v.text])).toEqual([
      ["Z", "Z"],
      ["a", "a"],
    ]);
    expect(await collect(store.keys(Tag))).toEqual(["b"]);
    await store.close();
  });

  it("stops a scan whose signal aborts, with an AbortError", async () => {
    const { store } = await make();
    const batch = store.batch();
    for (let i = 0; i < 50; i++) batch.put(Note, String(i).padStart(3, "0"), note("x"));
    await batch.write();
    const controller = new AbortController();
    const seen: string[] = [];
    const error = await (async () => {
      for await (const key of store.keys(Note, { signal: controller.signal })) {
        seen.push(key);
        if (seen.length === 3) controller.abort();
      }
    })().catch((e: unknown) => e);
    expect((error as Error).name).toBe("AbortError");
    expect(seen.length).toBeLessThan(50);
    await store.close();
  });

  it("changes its digest with every change of content, and only then", async () => {
    const { store } = await make();
    const empty = await store.digest();
    await store.batch().put(Note, "a", note("one")).write();
    const one = await store.digest();
    expect(one).not.toBe(empty);
    expect(await store.digest()).toBe(one);
    await store.batch().put(Note, "a", note("two")).write();
    expect(await store.digest()).not.toBe(one);
    await store.close();
  });

  it("stops for writes after the first failed one, tells its listeners once, and still reads", async () => {
    const { store, failNextWrite } = await make();
    await store.batch().put(Note, "kept", note("kept")).write({ sync: true });
    const told: StorageFailure[] = [];
    store.onFailure((f) => told.push(f));
    await failNextWrite();
    const first = await store
      .batch()
      .put(Note, "lost", note("lost"))
      .write()
      .catch((e: unknown) => e);
    expect(first).toBeInstanceOf(StorageFailure);
    const later = await store
      .batch()
      .put(Note, "later", note("later"))
      .write({ sync: true })
      .catch((e: unknown) => e);
    expect(later).toBe(first);
    expect(told).toEqual([first]);
    expect(store.failure).toBe(first);
    expect(await store.get(Note, "kept")).toEqual(note("kept"));
    expect(await collect(store.keys(Note))).toEqual(["kept"]);
    const lateListener: StorageFailure[] = [];
    store.onFailure((f) => lateListener.push(f));
    expect(lateListener).toEqual([first]);
    await store.close();
  });

  it("refuses writes once closed, after finishing those already issued", async () => {
    const { store } = await make();
    const pending = store.batch().put(Note, "a", note("one")).write();
    const closing = store.close();
    await pending;
    await closing;
    const refused = await store
      .batch()
      .put(Note, "b", note("two"))
      .write()
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreClosedError);
  });
});

describe("the in-memory store's slow writes", () => {
  it("delays each write and keeps their order", async () => {
    const store = createMemoryStore();
    await store.open();
    store.delayWrites(20);
    let firstDone = false;
    const first = store
      .batch()
      .put(Note, "k", note("first"))
      .write()
      .then(() => (firstDone = true));
    const second = store.batch().put(Note, "k", note("second")).write({ sync: true });
    expect(await store.get(Note, "k")).toBeUndefined(); // nothing applied yet
    await second;
    expect(firstDone).toBe(true);
    await first;
    expect(await store.get(Note, "k")).toEqual(note("second"));
    expect(store.writes).toEqual({ applied: 2, synced: 1 });
  });
});
