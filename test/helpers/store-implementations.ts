import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { createLevelStore, createMemoryStore, type Store } from "../../src/store/index.js";
import { createPostgresStore, WRITER_SUFFIX } from "../../src/store/postgres/index.js";
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
        // The next write fails for real: the database ends the writer's connection (and waits
        // until it is gone), as when it restarts or an administrator ends it.
        const database = new URL(url).pathname.slice(1);
        const failNextWrite = async () => {
          const ended = await postgres.query(
            `SELECT pg_terminate_backend(pid, 10000) AS ended FROM pg_stat_activity
             WHERE datname = $1 AND application_name = $2`,
            [database, `contract${WRITER_SUFFIX}`],
          );
          expect(ended).toEqual([{ ended: true }]);
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
