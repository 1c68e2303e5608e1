import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { ConflictError, createMemoryStore } from "../../src/store/index.js";
import {
  createPostgresStore,
  DatabaseOpenError,
  type PostgresStore,
  SCHEMA_VERSION,
  SchemaTooNewError,
} from "../../src/store/postgres/index.js";
import { markedProcesses } from "../helpers/marked-processes.js";
import { startPostgres } from "../helpers/postgres.js";
import { Note, usePostgresStores } from "../helpers/postgres-stores.js";

/** What the PostgreSQL store does beyond the Store contract (test/unit/store-contract.test.ts). */
const cluster = usePostgresStores();
const open = cluster.open;

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const db = (url: string) => new URL(url).pathname.slice(1);

/**
 * Batches whose transaction notes, in `seen`, the `synchronous_commit` it runs with (and so commits
 * with), through a guard.
 */
function commitModes(store: PostgresStore, seen: string[]) {
  return () =>
    store.guardedBatch([
      async (tx) => {
        const { rows } = await tx.query<{ mode: string }>(
          "SELECT current_setting('synchronous_commit') AS mode",
        );
        seen.push(rows[0]!.mode);
        return undefined;
      },
    ]);
}

describe("the PostgreSQL store", () => {
  it("creates its schema on first open, and opening again changes nothing", async () => {
    const url = await cluster.postgres.createDatabase();
    const store = await open(url);
    const versions = () =>
      cluster.postgres.query<{ version: number }>(
        "SELECT version FROM parkway_schema ORDER BY version",
        [],
        db(url),
      );
    expect(await versions()).toEqual(
      Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1 })),
    );
    await store.batch().put(Note, "a", { text: "one" }).write({ sync: true });
    await store.close();
    const again = await open(url);
    expect(await again.get(Note, "a")).toEqual({ text: "one" });
    expect(await versions()).toHaveLength(SCHEMA_VERSION);
    const columns = await cluster.postgres.query<{
      column_name: string;
      collation_name: string | null;
    }>(
      `SELECT column_name, collation_name FROM information_schema.columns
       WHERE table_name = 'parkway_records' ORDER BY ordinal_position`,
      [],
      db(url),
    );
    expect(columns).toEqual([
      { column_name: "kind", collation_name: "C" },
      { column_name: "key", collation_name: null },
      { column_name: "value", collation_name: null },
    ]);
  });

  it("migrates one node at a time: opens wait for the schema lock, and stores opening together migrate once", async () => {
    const url = await cluster.postgres.createDatabase();
    // Another node holds the schema lock: opening waits for it.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query("SELECT pg_advisory_lock(8097880491866188065)");
    let done = false;
    const waiting = open(url).then(() => (done = true));
    await sleep(300);
    expect(done).toBe(false);
    await holder.query("SELECT pg_advisory_unlock(8097880491866188065)");
    await holder.end();
    await waiting;

    const fresh = await cluster.postgres.createDatabase();
    const stores = await Promise.all(Array.from({ length: 4 }, () => open(fresh)));
    await stores[0]!.batch().put(Note, "k", { text: "written by one" }).write();
    for (const store of stores)
      expect(await store.get(Note, "k")).toEqual({ text: "written by one" });
    const applied = await cluster.postgres.query<{ n: string }>(
      "SELECT count(*) AS n FROM parkway_schema",
      [],
      db(fresh),
    );
    expect(Number(applied[0]!.n)).toBe(SCHEMA_VERSION);
  });

  it("refuses a database whose schema is newer than the server, naming both versions and changing nothing", async () => {
    const url = await cluster.postgres.createDatabase();
    await (await open(url)).close();
    await cluster.postgres.query("INSERT INTO parkway_schema (version) VALUES (99)", [], db(url));
    const secretUrl = cluster.postgres.url(db(url), { password: "s3cret-pass" });
    const error = await createPostgresStore({ url: secretUrl })
      .open()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaTooNewError);
    const message = (error as Error).message;
    expect(message).toContain("schema version 99");
    expect(message).toContain(`this server's ${SCHEMA_VERSION}`);
    expect(message).toContain("upgrade Parkway");
    expect(message).toContain(":***@127.0.0.1");
    expect(message).not.toContain("s3cret");
    const versions = await cluster.postgres.query(
      "SELECT version FROM parkway_schema",
      [],
      db(url),
    );
    expect(versions).toHaveLength(SCHEMA_VERSION + 1);
  });

  it("names the database, password masked, when it cannot be reached or does not exist", async () => {
    const missing = createPostgresStore({
      url: cluster.postgres.url("nothing_here", { password: "pw1" }),
    });
    const error = (await missing.open().catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(DatabaseOpenError);
    expect(error.message).toMatch(
      /^cannot open database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/nothing_here: .*nothing_here.*does not exist/,
    );
    expect(error.message).not.toContain("pw1");
    const closed = createPostgresStore({ url: "postgres://postgres:pw2@127.0.0.1:1/x" });
    const refused = (await closed.open().catch((e: unknown) => e)) as Error;
    expect(refused).toBeInstanceOf(DatabaseOpenError);
    expect(refused.message).toContain("ECONNREFUSED");
    expect(refused.message).not.toContain("pw2");
  });

  it("orders keys bytewise (UTF-8), non-ASCII and NUL included, as the other stores do", async () => {
    const store = await open(await cluster.postgres.createDatabase());
    const memory = createMemoryStore();
    const keys = [
      "b",
      "B",
      "a",
      "é",
      "e",
      "ä",
      "z",
      "~",
      "Ω",
      "😀",
      "\u00ff",
      "日本",
      "a b",
      "a-b",
      "",
      "a\0b",
      "a\0",
    ];
    for (const target of [store, memory]) {
      const batch = target.batch();
      for (const key of keys) batch.put(Note, key, { text: key });
      await batch.write();
    }
    const bytewise = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(await collect(store.keys(Note))).toEqual(bytewise);
    expect(await collect(store.keys(Note))).toEqual(await collect(memory.keys(Note)));
    const range = { gt: "z", lte: "日本", reverse: true };
    expect(await collect(store.keys(Note, range))).toEqual(await collect(memory.keys(Note, range)));
    expect(await collect(store.keys(Note, range))).toEqual(["日本", "Ω", "\u00ff", "é", "ä", "~"]);
    expect(await store.getMany(Note, ["😀", "missing", "😀", "a\0b"])).toEqual([
      { text: "😀" },
      undefined,
      { text: "😀" },
      { text: "a\0b" },
    ]);
    // A key PostgreSQL's text could not hold is a key like any other, checked and deleted too.
    expect(await store.get(Note, "a\0")).toEqual({ text: "a\0" });
    await store
      .batch()
      .check(Note, "a\0", (c) => c?.text === "a\0", "a NUL key")
      .del(Note, "a\0")
      .put(Note, "\0", { text: "nul" })
      .write({ sync: true });
    expect(await collect(store.keys(Note, { lt: "a" }))).toEqual(["", "\0", "B"]);
    expect(store.failure).toBeUndefined();
  });

  it("scans more than one page, forwards and backwards, within bounds and limits", async () => {
    const url = await cluster.postgres.createDatabase();
    const store = await open(url, { pageRows: 7 });
    const keys = Array.from({ length: 100 }, (_, i) => `k${String(i).padStart(3, "0")}`);
    const batch = store.batch();
    for (const key of keys) batch.put(Note, key, { text: key });
    await batch.write();
    expect(await collect(store.keys(Note))).toEqual(keys);
    expect((await collect(store.entries(Note))).map(([k, v]) => [k, v.text])).toEqual(
      keys.map((k) => [k, k]),
    );
    expect(await collect(store.keys(Note, { reverse: true }))).toEqual([...keys].reverse());
    expect(await collect(store.keys(Note, { gte: "k010", lt: "k050", limit: 23 }))).toEqual(
      keys.slice(10, 33),
    );
    expect(await collect(store.keys(Note, { gt: "k010", lte: "k050", reverse: true }))).toEqual(
      keys.slice(11, 51).reverse(),
    );
    expect(await collect(store.keys(Note, { limit: 0 }))).toEqual([]);
    // With the default page size too.
    const big = await open(url);
    const many = big.batch();
    for (let i = 0; i < 1200; i++) many.put(Note, `m${String(i).padStart(5, "0")}`, { text: "x" });
    await many.write();
    expect(await collect(big.keys(Note, { gte: "m" }))).toHaveLength(1200);
    expect(await collect(big.entries(Note, { reverse: true, lt: "m" }))).toHaveLength(100);
  });

  it("runs a guard's SQL in the write's transaction, and a refusing guard rejects its batch alone", async () => {
    const url = await cluster.postgres.createDatabase();
    const store = await open(url);
    const seen: unknown[] = [];
    const guarded = store
      .guardedBatch([
        async (tx) => {
          const { rows } = await tx.query<{ n: string }>(
            "SELECT count(*) AS n FROM parkway_records WHERE kind = 'note'",
          );
          seen.push(Number(rows[0]!.n));
          return undefined;
        },
      ])
      .put(Note, "second", { text: "2" })
      .write();
    const first = store.batch().put(Note, "first", { text: "1" });
    const refused = store
      .guardedBatch([() => Promise.resolve(new ConflictError("lease", "s1", "lease held"))])
      .put(Note, "refused", { text: "no" })
      .write()
      .catch((e: unknown) => e);
    await Promise.all([guarded, first.write()]);
    expect(seen).toEqual([0]);
    expect(await refused).toBeInstanceOf(ConflictError);
    expect(await collect(store.keys(Note))).toEqual(["first", "second"]);
    expect(store.failure).toBeUndefined();
  });

  it("commits every write with synchronous_commit on, even where the database's default is off", async () => {
    const url = await cluster.postgres.createDatabase();
    await cluster.postgres.query(`ALTER DATABASE "${db(url)}" SET synchronous_commit = off`);
    const store = await open(url);
    const seen: string[] = [];
    const probe = commitModes(store, seen);
    await probe().put(Note, "a", { text: "a" }).write({ sync: true });
    await probe().put(Note, "b", { text: "b" }).write();
    await probe().put(Note, "c", { text: "c" }).write({ sync: true });
    // An unsynced write too: a crash of the database must not lose what streams have shown.
    expect(seen.splice(0)).toEqual(["on", "on", "on"]);
    await Promise.all([
      probe().put(Note, "d", { text: "d" }).write(),
      probe().put(Note, "e", { text: "e" }).write(),
      probe().put(Note, "f", { text: "f" }).write({ sync: true }),
    ]);
    expect(seen).toEqual(["on", "on", "on"]);
  });

  it("commits relaxed writes with synchronous_commit off, unless written together with others", async () => {
    const store = await open(await cluster.postgres.createDatabase());
    const seen: string[] = [];
    const probe = commitModes(store, seen);
    await probe().put(Note, "a", { text: "a" }).write({ relaxed: true });
    expect(seen.splice(0)).toEqual(["off"]);
    expect(await store.get(Note, "a")).toEqual({ text: "a" });
    // The setting was the transaction's own: the next write commits synced again.
    await probe().put(Note, "b", { text: "b" }).write();
    await probe().put(Note, "c", { text: "c" }).write({ sync: true, relaxed: true });
    expect(seen.splice(0)).toEqual(["on", "on"]);
    // Written in one transaction with a write that is not relaxed: committed synced. The three
    // queue behind a write held open, so they are written together.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = store
      .guardedBatch([() => held.then(() => undefined)])
      .put(Note, "0", { text: "0" })
      .write({ relaxed: true });
    await sleep(20);
    const together = Promise.all([
      probe().put(Note, "d", { text: "d" }).write({ relaxed: true }),
      probe().put(Note, "e", { text: "e" }).write({ relaxed: true }),
      probe().put(Note, "f", { text: "f" }).write(),
    ]);
    release();
    await Promise.all([first, together]);
    expect(seen).toEqual(["on", "on", "on"]);
    expect(await store.get(Note, "f")).toEqual({ text: "f" });
  });

  it("runs the cluster's postmaster with the test file's marker, so a leftover one is found", () => {
    const marked = markedProcesses("PARKWAY_TEST_FILE", process.env.PARKWAY_TEST_FILE!);
    expect(
      marked.filter((p) => p.command.includes(cluster.postgres.dataDir)).length,
    ).toBeGreaterThan(0);
  });
});

/** The processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // gone
    }
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const postmasterOf = (dataDir: string) =>
  Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);

describe("a temporary cluster", () => {
  it("goes away entirely when its postmaster is killed, as the leftover check kills it", async () => {
    // PostgreSQL's children write their titles over their environment, so only the postmaster (and
    // runuser) still show the marker; its children end when it dies.
    const other = await startPostgres();
    const url = await other.createDatabase();
    const store = createPostgresStore({ url });
    await store.open();
    const postmaster = postmasterOf(other.dataDir);
    const children = childrenOf(postmaster);
    expect(children.length).toBeGreaterThan(2);
    process.kill(postmaster, "SIGKILL");
    for (let i = 0; i < 100 && [postmaster, ...children].some(alive); i++) await sleep(50);
    expect([postmaster, ...children].filter(alive)).toEqual([]);
    await store.close();
    await other.stop();
  });

  it("leaves no process once stopped, open connections included", async () => {
    const other = await startPostgres();
    const store = createPostgresStore({ url: await other.createDatabase() });
    await store.open();
    const postmaster = postmasterOf(other.dataDir);
    const processes = [postmaster, ...childrenOf(postmaster)];
    await other.stop();
    await store.close();
    expect(processes.filter(alive)).toEqual([]);
    const marked = markedProcesses("PARKWAY_TEST_FILE", process.env.PARKWAY_TEST_FILE!);
    expect(marked.filter((p) => p.command.includes(other.dataDir))).toEqual([]);
  });
});
