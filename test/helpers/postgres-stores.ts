import { afterAll, beforeAll } from "vitest";
import { z } from "zod";
import { defineRecord } from "../../src/store/index.js";
import { createPostgresStore, type PostgresStore } from "../../src/store/postgres/index.js";
import { startPostgres, type TestPostgres } from "./postgres.js";

/** A small record for the PostgreSQL store's own tests. */
export const Note = defineRecord({
  kind: "note",
  version: 1,
  schema: z.object({ text: z.string() }),
});

/** A test file's PostgreSQL cluster and the stores it opened, all closed after its tests. */
export interface PostgresStores {
  /** The cluster (set once the file's tests start). */
  readonly postgres: TestPostgres;
  /** Opens a store on `url`, closed after the file's tests. */
  open(url: string, options?: { pageRows?: number }): Promise<PostgresStore>;
}

/** Starts a cluster before the file's tests, and stops it and every store opened after them. */
export function usePostgresStores(): PostgresStores {
  let postgres: TestPostgres | undefined;
  const opened: PostgresStore[] = [];
  beforeAll(async () => {
    postgres = await startPostgres();
  });
  afterAll(async () => {
    for (const store of opened) await store.close();
    await postgres?.stop();
  });
  return {
    get postgres() {
      if (!postgres) throw new Error("the cluster starts before the file's tests");
      return postgres;
    },
    async open(url, options = {}) {
      const store = createPostgresStore({ url, ...options });
      opened.push(store);
      await store.open();
      return store;
    },
  };
}
