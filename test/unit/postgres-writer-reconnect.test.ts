/**
 * The PostgreSQL store's writer when the database ends its connection: ended while idle (a
 * restart, a terminated backend), the next write goes through a new connection, waiting for the
 * database to come back for up to `reconnectMs`; lost under a write, the store fails (that write's
 * outcome is unknown). A real cluster.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { StorageFailure } from "../../src/store/index.js";
import { createPostgresStore, WRITER_SUFFIX } from "../../src/store/postgres/index.js";
import { Note, usePostgresStores } from "../helpers/postgres-stores.js";

const cluster = usePostgresStores();

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Ends the writer's connection of the stores on `database`, as an administrator would. */
async function terminateWriters(database: string): Promise<number> {
  const rows = await cluster.postgres.query<{ ended: boolean }>(
    `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
      WHERE datname = $1 AND application_name LIKE $2`,
    [database, `%${WRITER_SUFFIX}`],
  );
  return rows.filter((row) => row.ended).length;
}

/** Waits until the server has told the writer's connection it ended. */
const told = () => sleep(200);

describe("the PostgreSQL store's writer connection", () => {
  it("is replaced when the database ended it while idle: the next write succeeds", async () => {
    const url = await cluster.postgres.createDatabase();
    const store = await cluster.open(url);
    await store.batch().put(Note, "a", { text: "1" }).write({ sync: true });
    expect(await terminateWriters(new URL(url).pathname.slice(1))).toBe(1);
    await told();
    await store.batch().put(Note, "b", { text: "2" }).write({ sync: true });
    await store.batch().put(Note, "c", { text: "3" }).write();
    expect(store.failure).toBeUndefined();
    expect(await collect(store.keys(Note))).toEqual(["a", "b", "c"]);
  });

  it("waits for a restarted database, then writes; reads fail UNAVAILABLE meanwhile", async () => {
    const url = await cluster.postgres.createDatabase();
    const store = await cluster.open(url);
    await store.batch().put(Note, "a", { text: "1" }).write({ sync: true });
    await cluster.postgres.kill();
    await told();
    const written = store.batch().put(Note, "b", { text: "2" }).write({ sync: true });
    const read = await store.get(Note, "a").catch((err: unknown) => err);
    expect(read).toMatchObject({ code: "unavailable" });
    await sleep(500);
    await cluster.postgres.restart();
    await written;
    expect(store.failure).toBeUndefined();
    expect(await collect(store.keys(Note))).toEqual(["a", "b"]);
  });

  it("fails the store when the database does not come back within reconnectMs", async () => {
    const url = await cluster.postgres.createDatabase();
    const store = createPostgresStore({ url, reconnectMs: 300 });
    await store.open();
    try {
      await store.batch().put(Note, "a", { text: "1" }).write({ sync: true });
      await cluster.postgres.kill();
      await told();
      const failed = await store
        .batch()
        .put(Note, "b", { text: "2" })
        .write()
        .catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(StorageFailure);
      expect(store.failure).toBe(failed);
    } finally {
      await cluster.postgres.restart();
      await store.close();
    }
  });

  it("fails the store when the connection is lost under a write: its outcome is unknown", async () => {
    const url = await cluster.postgres.createDatabase();
    const store = await cluster.open(url);
    const failed = await store
      .guardedBatch([
        async (tx) => {
          await tx.query("SELECT pg_terminate_backend(pg_backend_pid())");
          return undefined;
        },
      ])
      .put(Note, "a", { text: "1" })
      .write()
      .catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(StorageFailure);
    const after = await store
      .batch()
      .put(Note, "b", { text: "2" })
      .write()
      .catch((err: unknown) => err);
    expect(after).toBe(failed);
  });
});
