import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createLevelStore,
  decodeRecord,
  defineRecord,
  LEVEL_TUNING,
  type LevelTuning,
  RecordError,
  StoreLockedError,
} from "../../src/store/index.js";
import { storedField } from "../../src/store/record.js";

const fixtures = JSON.parse(
  readFileSync(new URL("../fixtures/store/records.json", import.meta.url), "utf8"),
) as Record<string, string>;

const Person = defineRecord({
  kind: "person",
  version: 2,
  schema: z.strictObject({ name: z.string(), tags: z.array(z.string()) }),
  migrations: { 1: (d) => ({ ...(d as object), tags: [] }) },
});

describe("record versions", () => {
  it("migrates a record of an older version", () => {
    expect(decodeRecord(Person, "p1", fixtures.v1!)).toEqual({ name: "ada", tags: [] });
  });

  it("reads the current version", () => {
    expect(decodeRecord(Person, "p1", fixtures.v2!)).toEqual({ name: "ada", tags: [] });
  });

  it.each([
    ["future", /version 9, newer than this server understands/],
    ["notJson", /is corrupt \(not JSON\)/],
    ["noEnvelope", /is corrupt \(no version envelope\)/],
    ["invalid", /is invalid/],
  ])("refuses the %s fixture with a clear error", (name, message) => {
    expect(() => decodeRecord(Person, "p1", fixtures[name]!)).toThrow(RecordError);
    expect(() => decodeRecord(Person, "p1", fixtures[name]!)).toThrow(message);
  });

  it("refuses a version without a migration path", () => {
    const NoPath = defineRecord({ ...Person, migrations: {} });
    expect(() => decodeRecord(NoPath, "p1", fixtures.v1!)).toThrow(/cannot be migrated/);
  });
});

describe("one stored field", () => {
  const read = (raw: string) => storedField(Person, "p1", raw, "name");

  it("reads a leading string as the whole parse does, whatever follows it", () => {
    expect(read('{"v":2,"d":{"name":"ada","tags":[]}}')).toBe("ada");
    // The rest is not parsed: what a check needs is the first member.
    expect(read('{"v":2,"d":{"name":"ada","tags":[')).toBe("ada");
  });

  it("parses the whole value for escapes, another first member, or an older version", () => {
    expect(read(JSON.stringify({ v: 2, d: { name: 'a"d\\a', tags: [] } }))).toBe('a"d\\a');
    expect(read(JSON.stringify({ v: 2, d: { name: "\u00e9\n", tags: [] } }))).toBe("\u00e9\n");
    expect(read('{"v":2,"d":{"tags":[],"name":"bob"}}')).toBe("bob");
    expect(read('{"v":2,"d":{"name":7,"tags":[]}}')).toBe(7);
    expect(read(fixtures.v1!)).toBe("ada");
    expect(() => read(fixtures.future!)).toThrow(/newer than this server understands/);
    expect(() => read('{"v":2,"d":{"tags":[],"name":"bob"')).toThrow(/is corrupt \(not JSON\)/);
  });
});

describe("LevelStore", () => {
  async function open() {
    const dir = await mkdtemp(path.join(tmpdir(), "parkway-store-"));
    const store = createLevelStore(dir);
    await store.open();
    return { store, dir };
  }

  it("writes a batch atomically across kinds and reads it back validated", async () => {
    const { store } = await open();
    const Tag = defineRecord({ kind: "tag", version: 1, schema: z.object({ label: z.string() }) });
    await store
      .batch()
      .put(Person, "a", { name: "ada", tags: ["x"] })
      .put(Person, "b", { name: "bob", tags: [] })
      .put(Tag, "x", { label: "X" })
      .write({ sync: true });
    expect(await store.get(Person, "a")).toEqual({ name: "ada", tags: ["x"] });
    expect(await store.get(Tag, "x")).toEqual({ label: "X" });
    expect(await store.getMany(Person, ["b", "zz"])).toEqual([
      { name: "bob", tags: [] },
      undefined,
    ]);
    const keys: string[] = [];
    for await (const [key] of store.entries(Person, { gte: "a", limit: 10 })) keys.push(key);
    expect(keys).toEqual(["a", "b"]);
    const keysOnly: string[] = [];
    for await (const key of store.keys(Person, { gt: "a" })) keysOnly.push(key);
    expect(keysOnly).toEqual(["b"]);
    const tagKeys: string[] = [];
    for await (const key of store.keys(Tag)) tagKeys.push(key);
    expect(tagKeys).toEqual(["x"]);
    await store.close();
  });

  it("refuses to write an invalid record and leaves the batch unapplied", async () => {
    const { store } = await open();
    expect(() =>
      store
        .batch()
        .put(Person, "a", { name: "ada", tags: [] })
        .put(Person, "c", { name: 1 } as never),
    ).toThrow(RecordError);
    expect(await store.get(Person, "a")).toBeUndefined();
    await store.close();
  });

  it("refuses a second opener of the same directory", async () => {
    const { store, dir } = await open();
    const other = createLevelStore(dir);
    await expect(other.open()).rejects.toBeInstanceOf(StoreLockedError);
    await store.close();
  });
});

describe.runIf(existsSync("/proc/self/maps"))("LevelStore's table cache", () => {
  const Blob = defineRecord({ kind: "blob", version: 1, schema: z.string() });
  const key = (i: number) => String(i).padStart(6, "0");

  /**
   * A store of 80 tables (1 MB tables, the smallest LevelDB writes, and a 1 MB memtable, so the
   * store's tuning is kept but for the tables' size), every one of them read once; how many of its
   * tables are memory-mapped into this process then.
   */
  async function mappedAfterReadingAll(tuning: LevelTuning): Promise<number> {
    const dir = await mkdtemp(path.join(tmpdir(), "parkway-tables-"));
    const store = createLevelStore(dir, {
      ...tuning,
      maxFileSize: 1 << 20,
      writeBufferSize: 1 << 20,
    });
    await store.open();
    const records = 80 * 16; // 64 KB each, incompressible: 16 per table
    for (let i = 0; i < records; i += 16) {
      const batch = store.batch();
      for (let j = i; j < i + 16; j++) {
        batch.put(Blob, key(j), randomBytes(48 << 10).toString("base64"));
      }
      await batch.write();
    }
    for (let i = 0; i < records; i += 4) expect(await store.get(Blob, key(i))).toBeDefined();
    const maps = readFileSync("/proc/self/maps", "utf8").split("\n");
    const mapped = new Set(
      maps.map((line) => line.split(/\s+/).at(-1) ?? "").filter((f) => f.startsWith(dir + "/")),
    );
    await store.close();
    await rm(dir, { recursive: true, force: true });
    return mapped.size;
  }

  it("keeps at most 64 tables open and mapped, however many the store has", async () => {
    expect(await mappedAfterReadingAll(LEVEL_TUNING)).toBeLessThanOrEqual(64);
  });

  it("maps more with LevelDB's default table cache (the bound above is the tuning's)", async () => {
    expect(await mappedAfterReadingAll({ ...LEVEL_TUNING, maxOpenFiles: 1000 })).toBeGreaterThan(
      64,
    );
  });
});

describe("LevelStore's table blocks", () => {
  const Doc = defineRecord({
    kind: "doc",
    version: 1,
    schema: z.object({ id: z.string(), state: z.string(), at: z.string() }),
  });

  /** Bytes of the tables a store writes for the same 20,000 session-like records. */
  async function tableBytes(tuning: LevelTuning): Promise<number> {
    const dir = await mkdtemp(path.join(tmpdir(), "parkway-blocks-"));
    const store = createLevelStore(dir, tuning);
    await store.open();
    for (let i = 0; i < 20_000; i += 1000) {
      const batch = store.batch();
      for (let j = i; j < i + 1000; j++) {
        const id = `ses_${String(j).padStart(8, "0")}`;
        batch.put(Doc, id, { id, state: "parked", at: new Date(j * 1000).toISOString() });
      }
      await batch.write();
    }
    await store.close();
    // Opening again writes the log out as a table.
    await store.open();
    await store.close();
    let bytes = 0;
    for (const name of await readdir(dir, { recursive: true })) {
      if (name.endsWith(".ldb")) bytes += (await stat(path.join(dir, name))).size;
    }
    await rm(dir, { recursive: true, force: true });
    return bytes;
  }

  it("writes 16 KB blocks, which compress better than LevelDB's default 4 KB", async () => {
    expect(LEVEL_TUNING.blockSize).toBe(16 * 1024);
    const tuned = await tableBytes(LEVEL_TUNING);
    const small = await tableBytes({ ...LEVEL_TUNING, blockSize: 4096 });
    expect(tuned).toBeGreaterThan(0);
    expect(tuned).toBeLessThan(small * 0.9);
  });
});
