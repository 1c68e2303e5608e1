import type { Config } from "../config/schema.js";
import { createLevelStore } from "../store/level-store.js";
import type { Store } from "../store/store.js";

/**
 * The store a configuration names: PostgreSQL at `database.url` when it is set, else LevelDB under
 * `data`. The PostgreSQL store (and its driver) is loaded only when it is used, so a server on
 * LevelDB does not pay for it at start-up.
 */
export async function createStore(config: Config): Promise<Store> {
  const url = config.database.url;
  if (url === undefined) return createLevelStore(config.data);
  const { createPostgresStore } = await import("../store/postgres/index.js");
  return createPostgresStore({
    url,
    poolSize: config.database.poolSize,
    // A node frozen inside a write must not hold its rows' locks past its leases.
    idleInTransactionTimeoutMs: config.database.leaseTimeout,
  });
}
