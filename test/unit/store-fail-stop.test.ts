import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createLevelStore,
  defineRecord,
  StorageFailure,
  StoreClosedError,
  type Store,
} from "../../src/store/index.js";
import { mountSmallDisk, type SmallDisk, writeFaults } from "../helpers/store-faults.js";

const Note = defineRecord({ kind: "note", version: 1, schema: z.object({ text: z.string() }) });

async function openStore(dir?: string): Promise<Store> {
  const store = createLevelStore(dir ?? (await mkdtemp(path.join(tmpdir(), "parkway-store-"))));
  await store.open();
  return store;
}

const put = (store: Store, key: string, sync = false) =>
  store
    .batch()
    .put(Note, key, { text: `note ${key}` })
    .write({ sync });

async function keys(store: Store): Promise<string[]> {
  const out: string[] = [];
  for await (const key of store.keys(Note)) out.push(key);
  return out;
}

describe("LevelStore fail-stop", () => {
  it("refuses every write after the first failed one, and hands LevelDB nothing more", async () => {
    const store = await openStore();
    const faults = writeFaults(store);
    const seen: StorageFailure[] = [];
    store.onFailure((f) => seen.push(f));
    await put(store, "a", true);
    faults.failNext();
    const failed = await put(store, "b").catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(StorageFailure);
    const failure = failed as StorageFailure;
    expect(failure.code).toBe("unavailable");
    expect(failure.message).toBe(
      "storage failed (IO error: No space left on device); this server accepts no more writes and restarts",
    );
    expect(failure.details.reason).toBe("STORAGE_FAILED");
    expect((failure.cause as { code?: string }).code).toBe("LEVEL_IO_ERROR");
    expect(store.failure).toBe(failure);
    expect(seen).toEqual([failure]);
    const calls = faults.calls;

    // Later writes, synced or not, are refused with the same failure without reaching LevelDB.
    await expect(put(store, "c", true)).rejects.toBe(failure);
    await expect(put(store, "d")).rejects.toBe(failure);
    expect(faults.calls).toBe(calls);
    expect(seen).toHaveLength(1);
    // A listener that comes late hears of it at once; reads go on.
    const late: StorageFailure[] = [];
    store.onFailure((f) => late.push(f));
    expect(late).toEqual([failure]);
    expect(await store.get(Note, "a")).toEqual({ text: "note a" });
    await store.close();

    const reopened = await openStore(store.location);
    expect(await keys(reopened)).toEqual(["a"]);
    expect(reopened.failure).toBeUndefined();
    await put(reopened, "e", true);
    expect(await keys(reopened)).toEqual(["a", "e"]);
    await reopened.close();
  });

  it("never hands LevelDB a write issued while a failing write was in flight", async () => {
    const store = await openStore();
    const faults = writeFaults(store);
    faults.failNext({ delayMs: 50 });
    const writes = [put(store, "a"), put(store, "b", true), put(store, "c")].map((p) =>
      p.then(
        () => "ok",
        (e: unknown) => e,
      ),
    );
    const results = await Promise.all(writes);
    expect(results.every((r) => r instanceof StorageFailure)).toBe(true);
    expect(faults.calls).toBe(1);
    await store.close();
    const reopened = await openStore(store.location);
    expect(await keys(reopened)).toEqual([]);
    await reopened.close();
  });

  it("joins the writes issued while one is in flight into the next, in order", async () => {
    const store = await openStore();
    const faults = writeFaults(store);
    const first = put(store, "k", true);
    const later = Array.from({ length: 20 }, (_, i) =>
      store
        .batch()
        .put(Note, "k", { text: `v${i}` })
        .write({ sync: i === 5 }),
    );
    await Promise.all([first, ...later]);
    expect(faults.calls).toBe(2);
    // Applied in the order issued: the last write wins.
    expect(await store.get(Note, "k")).toEqual({ text: "v19" });
    await store.close();
  });

  it("refuses a write once closed, as the store closing, not as a storage failure", async () => {
    const store = await openStore();
    const seen: StorageFailure[] = [];
    store.onFailure((f) => seen.push(f));
    await store.close();
    await expect(put(store, "a")).rejects.toBeInstanceOf(StoreClosedError);
    expect(store.failure).toBeUndefined();
    expect(seen).toEqual([]);
  });
});

describe("LevelStore on a full disk (tmpfs)", () => {
  let disk: SmallDisk | undefined;
  let skipped = "";
  beforeAll(async () => {
    const mounted = await mountSmallDisk("2m");
    if ("skipped" in mounted) skipped = mounted.skipped;
    else disk = mounted;
  });
  afterAll(async () => {
    await disk?.unmount();
  });

  it("keeps every acknowledged write after ENOSPC, freeing space and reopening", async (ctx) => {
    if (!disk) {
      console.warn(`skipped: ${skipped}`);
      ctx.skip();
      return;
    }
    const dir = path.join(disk.dir, "data");
    const store = await openStore(dir);
    await put(store, "before", true);
    await disk.fill();
    const acknowledged = ["before"];
    let failure: unknown;
    for (let i = 0; i < 10_000 && failure === undefined; i++) {
      const key = `k${String(i).padStart(5, "0")}`;
      await store
        .batch()
        .put(Note, key, { text: "x".repeat(300) })
        .write({ sync: i % 2 === 0 })
        .then(
          () => acknowledged.push(key),
          (err: unknown) => (failure = err),
        );
    }
    expect(failure).toBeInstanceOf(StorageFailure);
    expect((failure as StorageFailure).message).toContain("No space left on device");
    expect((failure as StorageFailure).message).not.toContain(disk.dir);

    // With space again, the same process still writes nothing: the log ends in a partial record.
    await disk.free();
    await expect(put(store, "after", true)).rejects.toBe(failure);
    await store.close();

    const reopened = await openStore(dir);
    expect(await keys(reopened)).toEqual(acknowledged.sort());
    await put(reopened, "after", true);
    await reopened.close();
    const again = await openStore(dir);
    expect(await keys(again)).toEqual([...acknowledged, "after"].sort());
    await again.close();
  });
});
