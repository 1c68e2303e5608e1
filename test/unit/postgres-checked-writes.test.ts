import pg from "pg";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConflictError } from "../../src/store/index.js";
import type { PostgresStore } from "../../src/store/postgres/index.js";
import { Note, usePostgresStores } from "../helpers/postgres-stores.js";

/**
 * How the PostgreSQL store writes a batch with checks: in one statement when the writer knows the
 * checked records' values (and the database confirms them), the long way (a transaction that reads
 * them FOR UPDATE) otherwise; another node's write in between is found either way.
 */
const cluster = usePostgresStores();
afterEach(() => {
  vi.restoreAllMocks();
});

/** Puts `key` with a check that it is absent: the writer reads the record, and knows it after. */
const putNew = (store: PostgresStore, key: string, text: string) =>
  store
    .batch()
    .check(Note, key, (r) => r === undefined, "absent")
    .put(Note, key, { text })
    .write();

/** Two stores on one new database (two nodes), the first having put "k" (= "a") with a check. */
async function twoNodes(): Promise<[PostgresStore, PostgresStore]> {
  const url = await cluster.postgres.createDatabase();
  const [a, b] = [await cluster.open(url), await cluster.open(url)];
  await putNew(a, "k", "a");
  return [a, b];
}

/** One statement sent to the database: its prepared name or its text, and its first row. */
interface Sent {
  what: string;
  row: Record<string, unknown> | undefined;
}

/** Records every query any `pg` client sends from now on, with its first row once answered. */
function watchQueries(): Sent[] {
  const sent: Sent[] = [];
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (
    this: pg.Client,
    ...args: unknown[]
  ) {
    const config = args[0] as string | { name?: string; text: string };
    const entry: Sent = {
      what: typeof config === "string" ? config : (config.name ?? config.text),
      row: undefined,
    };
    sent.push(entry);
    const result = query.apply(this, args);
    if (result instanceof Promise) {
      void result.then(
        (r: { rows?: Record<string, unknown>[] }) => (entry.row = r?.rows?.[0]),
        () => undefined,
      );
    }
    return result as never;
  });
  return sent;
}

/** The writes among `sent`: the statements of the store's writer, in order. */
const writes = (sent: Sent[]) =>
  sent
    .map((s) => s.what)
    .filter((w) => /^(BEGIN|COMMIT|ROLLBACK|parkway-write|parkway-read-checked)/.test(w));

const holdsText = (text: string) => (r: { text: string } | undefined) => r?.text === text;

describe("checked writes on PostgreSQL", () => {
  it("writes a checked batch in one statement once the checked record is known, the first the long way", async () => {
    const store = await cluster.open(await cluster.postgres.createDatabase());
    await store.batch().put(Note, "k", { text: "v1" }).write();
    const sent = watchQueries();
    await store
      .batch()
      .check(Note, "k", holdsText("v1"), "v1")
      .put(Note, "k", { text: "v2" })
      .write();
    expect(writes(sent.splice(0))).toEqual([
      "BEGIN",
      "parkway-read-checked",
      "parkway-write",
      "COMMIT",
    ]);
    // The writer read v1 and wrote v2 itself: the next check is made against v2 in one statement.
    await store
      .batch()
      .check(Note, "k", holdsText("v2"), "v2")
      .put(Note, "k", { text: "v3" })
      .write();
    await store.batch().check(Note, "k", holdsText("v3"), "v3").del(Note, "k").write();
    await store
      .batch()
      .check(Note, "k", (r) => r === undefined, "absent")
      .put(Note, "k", { text: "v4" })
      .write({ sync: true });
    expect(writes(sent)).toEqual([
      "parkway-write-expecting",
      "parkway-write-expecting",
      "parkway-write-expecting",
    ]);
    expect(sent.map((s) => s.row?.ok).filter((ok) => ok !== undefined)).toEqual([true, true, true]);
    expect(await store.get(Note, "k")).toEqual({ text: "v4" });
  });

  it("refuses a write whose check another node's write made false, though the value it knew passed", async () => {
    const [a, b] = await twoNodes();
    await b.batch().put(Note, "k", { text: "b" }).write();
    const sent = watchQueries();
    const refused = await a
      .batch()
      .check(Note, "k", holdsText("a"), "the note as a wrote it")
      .put(Note, "k", { text: "a2" })
      .put(Note, "other", { text: "a2" })
      .write()
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ConflictError);
    expect((refused as ConflictError).message).toContain("the note as a wrote it");
    // Tried in one statement with the value it knew, found changed, then read and refused.
    expect(writes(sent)).toEqual([
      "parkway-write-expecting",
      "BEGIN",
      "parkway-read-checked",
      "COMMIT",
    ]);
    expect(sent[0]!.row?.ok).toBe(false);
    expect(await a.get(Note, "k")).toEqual({ text: "b" });
    expect(await a.get(Note, "other")).toBeUndefined();
    expect(a.failure).toBeUndefined();
    // What it read is what it knows now: a check that holds for b's value goes in one statement.
    sent.splice(0);
    await a.batch().check(Note, "k", holdsText("b"), "b").put(Note, "k", { text: "a3" }).write();
    expect(writes(sent)).toEqual(["parkway-write-expecting"]);
    expect(await b.get(Note, "k")).toEqual({ text: "a3" });
  });

  it("admits a write whose check still holds after another node's write, the long way", async () => {
    const [a, b] = await twoNodes();
    await b.batch().del(Note, "k").write();
    await b.batch().put(Note, "k", { text: "b" }).write();
    const sent = watchQueries();
    await a
      .batch()
      .check(Note, "k", (r) => r !== undefined, "present")
      .put(Note, "k", { text: "a2" })
      .write();
    expect(writes(sent)).toEqual([
      "parkway-write-expecting",
      "BEGIN",
      "parkway-read-checked",
      "parkway-write",
      "COMMIT",
    ]);
    expect(await b.get(Note, "k")).toEqual({ text: "a2" });
  });

  it("writes a group of checked writes in one statement, each checked after those ahead of it", async () => {
    const store = await cluster.open(await cluster.postgres.createDatabase());
    await putNew(store, "k", "v1");
    const sent = watchQueries();
    // Issued together: the second and third queue behind the first and are written as one group.
    const results = await Promise.allSettled([
      store.batch().check(Note, "k", holdsText("v1"), "v1").put(Note, "k", { text: "v2" }).write(),
      store.batch().check(Note, "k", holdsText("v2"), "v2").put(Note, "k", { text: "v3" }).write(),
      store.batch().check(Note, "k", holdsText("v3"), "v3").put(Note, "j", { text: "v3" }).write(),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
    expect(writes(sent)).toEqual(["parkway-write-expecting", "parkway-write-expecting"]);
    expect(await store.get(Note, "k")).toEqual({ text: "v3" });
    expect(await store.get(Note, "j")).toEqual({ text: "v3" });
  });

  it("commits a relaxed checked write in one statement with synchronous_commit off, any other with it on", async () => {
    const store = await cluster.open(await cluster.postgres.createDatabase());
    await putNew(store, "k", "v1");
    const sent = watchQueries();
    await store
      .batch()
      .check(Note, "k", holdsText("v1"), "v1")
      .put(Note, "k", { text: "v2" })
      .write({ relaxed: true });
    await store
      .batch()
      .check(Note, "k", holdsText("v2"), "v2")
      .put(Note, "k", { text: "v3" })
      .write();
    await store
      .batch()
      .check(Note, "k", holdsText("v3"), "v3")
      .put(Note, "k", { text: "v4" })
      .write({ sync: true, relaxed: true });
    expect(writes(sent)).toEqual([
      "parkway-write-expecting",
      "parkway-write-expecting",
      "parkway-write-expecting",
    ]);
    expect(sent.map((s) => s.row?.mode)).toEqual(["off", "on", "on"]);
  });
});
