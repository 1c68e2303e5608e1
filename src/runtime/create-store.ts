import type { Config } from "../config/schema.js";
import { createLevelStore } from "../store/level-store.js";
import type { Logger } from "../common/logger.js";
import type { StoreSignals } from "../store/signals.js";
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

/**
 * With several nodes on one database (`database.url`), the wake-ups between them: PostgreSQL's
 * LISTEN/NOTIFY on a connection of their own.
 */
export async function createSignals(
  config: Config,
  log: Logger,
): Promise<StoreSignals | undefined> {
  const url = config.database.url;
  if (url === undefined) return undefined;
  const { PgSignals } = await import("../store/postgres/pg-signals.js");
  return new PgSignals(url, log);
}
