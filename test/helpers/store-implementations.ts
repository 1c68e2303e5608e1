import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createLevelStore, createMemoryStore, type Store } from "../../src/store/index.js";
import { createPostgresStore } from "../../src/store/postgres/index.js";
import { startPostgres, type TestPostgres } from "./postgres.js";
import { writeFaults } from "./store-faults.js";

/** A store under test, with a way to make its next write fail and to open its data again. */
export interface StoreSubject {
  store: Store;
  failNextWrite(): void | Promise<void>;
  /**
   * Closes the store and opens what it left: the same directory or database; for the in-memory
   * store, its snapshot (what a crash would leave).
   */
  reopen(): Promise<Store>;
}

/**
 * Every Store implementation, each made fresh per call: the LevelDB store in a temporary
 * directory, the in-memory one, and the PostgreSQL one on a temporary cluster (a database per
 * call). Call `stop` after the file's tests to stop the cluster.
 */
export function storeImplementations(): {
  implementations: [string, () => Promise<StoreSubject>][];
  stop(): Promise<void>;
} {
  let cluster: Promise<TestPostgres> | undefined;
  const implementations: [string, () => Promise<StoreSubject>][] = [
    [
      "LevelDB",
      async () => {
        const location = await mkdtemp(path.join(tmpdir(), "parkway-contract-"));
        const store = createLevelStore(location);
        await store.open();
        const faults = writeFaults(store);
        const reopen = async () => {
          await store.close();
          const again = createLevelStore(location);
          await again.open();
          return again;
        };
        return { store, failNextWrite: () => faults.failNext(), reopen };
      },
    ],
    [
      "memory",
      async () => {
        const store = createMemoryStore();
        await store.open();
        const reopen = async () => {
          const again = store.snapshot();
          await store.close();
          await again.open();
          return again;
        };
        return { store, failNextWrite: () => store.failNextWrite(), reopen };
      },
    ],
    [
      "PostgreSQL",
      async () => {
        const postgres = await (cluster ??= startPostgres());
        const url = await postgres.createDatabase();
        const store = createPostgresStore({ url, applicationName: "contract" });
        await store.open();
        // The next write fails for real, under its statement: a trigger refuses the first
        // statement that changes the table (its sequence counts outside the transaction, so only
        // that one), as a full disk or a lost connection would fail it.
        const database = new URL(url).pathname.slice(1);
        const failNextWrite = async () => {
          await postgres.query(
            `CREATE SEQUENCE fail_once;
             CREATE FUNCTION fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN
               IF nextval('fail_once') = 1 THEN RAISE EXCEPTION 'the write fails'; END IF;
               RETURN NULL;
             END $$;
             CREATE TRIGGER fail_once BEFORE INSERT OR UPDATE OR DELETE ON parkway_records
               FOR EACH STATEMENT EXECUTE FUNCTION fail_once();`,
            [],
            database,
          );
        };
        const reopen = async () => {
          await store.close();
          const again = createPostgresStore({ url, applicationName: "contract-again" });
          await again.open();
          return again;
        };
        return { store, failNextWrite, reopen };
      },
    ],
  ];
  return { implementations, stop: async () => (await cluster)?.stop() };
}
