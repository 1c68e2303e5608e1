import type { ClientBase } from "pg";
import { DatabaseOpenError, SchemaTooNewError } from "./errors.js";

/** The table of records: one row per key of each record kind, the value as `encodeRecord` made it. */
export const RECORDS = "parkway_records";

/**
 * The table of applied schema versions, one row each, with when it was applied. The database's
 * schema version is the highest of them; none (or no table) is version 0, an empty database.
 */
export const SCHEMA_TABLE = "parkway_schema";

/**
 * The advisory lock held while the schema is checked and migrated, so that nodes starting together
 * migrate one at a time (and the others find the work done). Its key: "parkway!" as a bigint.
 */
const SCHEMA_LOCK = "8097880491866188065";

/**
 * The migrations: `MIGRATIONS[n]` brings the schema from version n to n + 1. Only appended to: a
 * released step never changes, so every database on version n has the same tables.
 *
 * Keys are stored as their UTF-8 bytes (`bytea`): they compare and sort bytewise, as LevelDB orders
 * them, whatever the database's collation, and any string can be a key (text cannot hold NUL).
 * Kinds, names from the code, are text in the "C" collation, which also sorts bytewise.
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE ${RECORDS} (
     kind text COLLATE "C" NOT NULL,
     key bytea NOT NULL,
     value text NOT NULL,
     PRIMARY KEY (kind, key)
   )`,
];

/** The schema version this server creates and understands. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** What `migrateSchema` did. */
export interface SchemaOutcome {
  /** The version found before. */
  from: number;
  /** The version now: `SCHEMA_VERSION`. */
  to: number;
}

/**
 * Brings the database's schema to `SCHEMA_VERSION` under the schema's advisory lock: creates it in
 * an empty database, applies the missing migrations (each in a transaction with its version row),
 * or does nothing when it is current. Throws `SchemaTooNewError` when the database is newer than
 * this server, and `DatabaseOpenError` when its encoding is not UTF-8 (keys would not sort as
 * bytes of UTF-8, and text that encoding cannot hold could not be stored).
 */
export async function migrateSchema(client: ClientBase, location: string): Promise<SchemaOutcome> {
  const encoding = await client.query<{ server_encoding: string }>("SHOW server_encoding");
  const name = encoding.rows[0]?.server_encoding ?? "unknown";
  if (name !== "UTF8") {
    throw new DatabaseOpenError(
      location,
      `its encoding is ${name}; Parkway needs a UTF8 database (CREATE DATABASE … ENCODING 'UTF8')`,
    );
  }
  await client.query(`SELECT pg_advisory_lock(${SCHEMA_LOCK})`);
  try {
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${SCHEMA_TABLE} (
         version integer PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const from = await schemaVersion(client);
    if (from > SCHEMA_VERSION) throw new SchemaTooNewError(location, from, SCHEMA_VERSION);
    for (let version = from; version < SCHEMA_VERSION; version++) {
      await client.query("BEGIN");
      try {
        await client.query(MIGRATIONS[version] ?? "");
        await client.query(`INSERT INTO ${SCHEMA_TABLE} (version) VALUES ($1)`, [version + 1]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      }
    }
    return { from, to: SCHEMA_VERSION };
  } finally {
    await client.query(`SELECT pg_advisory_unlock(${SCHEMA_LOCK})`).catch(() => undefined);
  }
}

/** The database's schema version: the highest applied, 0 for none. */
export async function schemaVersion(client: ClientBase): Promise<number> {
  const result = await client.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${SCHEMA_TABLE}`,
  );
  return result.rows[0]?.version ?? 0;
}
