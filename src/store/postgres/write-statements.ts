import { RECORDS } from "./schema.js";

/**
 * The statements of the store's writer (see `GroupWriter`). Keys are `bytea` (their UTF-8 bytes),
 * values text; each list of kinds, keys and values is passed as parallel arrays.
 */

/**
 * Writes the deletes and puts of a transaction in one statement: the operations are first reduced
 * to each key's last one (a key is then either deleted or put, never both), so the two parts touch
 * different rows.
 */
export const WRITE = {
  name: "parkway-write",
  text: `WITH gone AS (
           DELETE FROM ${RECORDS} AS r USING unnest($1::text[], $2::bytea[]) AS d(kind, key)
           WHERE r.kind = d.kind AND r.key = d.key
         ), put AS (
           INSERT INTO ${RECORDS} (kind, key, value)
           SELECT * FROM unnest($3::text[], $4::bytea[], $5::text[])
           ON CONFLICT (kind, key) DO UPDATE SET value = EXCLUDED.value
         )
         SELECT 1`,
};

/**
 * The same write in one statement, in a transaction of its own, made only if every record a check
 * looks at still holds the value expected ($6–$8: kind, key, value, NULL for absent), read
 * `FOR UPDATE`; `ok` says whether it was. $9 is the transaction's `synchronous_commit`.
 */
export const WRITE_EXPECTING = {
  name: "parkway-write-expecting",
  text: `WITH expected AS (
           SELECT * FROM unnest($6::text[], $7::bytea[], $8::text[]) AS e(kind, key, value)
         ), stored AS (
           SELECT r.kind, r.key, r.value
           FROM ${RECORDS} AS r JOIN expected AS e ON r.kind = e.kind AND r.key = e.key
           FOR UPDATE OF r
         ), verdict AS (
           SELECT NOT EXISTS (
             SELECT 1 FROM expected AS e LEFT JOIN stored AS s ON s.kind = e.kind AND s.key = e.key
             WHERE s.value IS DISTINCT FROM e.value
           ) AS ok
         ), mode AS (
           SELECT set_config('synchronous_commit', $9::text, true) AS mode
         ), gone AS (
           DELETE FROM ${RECORDS} AS r USING unnest($1::text[], $2::bytea[]) AS d(kind, key)
           WHERE r.kind = d.kind AND r.key = d.key AND (SELECT ok FROM verdict)
         ), put AS (
           INSERT INTO ${RECORDS} (kind, key, value)
           SELECT * FROM unnest($3::text[], $4::bytea[], $5::text[]) WHERE (SELECT ok FROM verdict)
           ON CONFLICT (kind, key) DO UPDATE SET value = EXCLUDED.value
         )
         SELECT (SELECT ok FROM verdict) AS ok, (SELECT mode FROM mode) AS mode`,
};

/** Reads the records the checks of a transaction look at, and locks them until it ends. */
export const READ_CHECKED = {
  name: "parkway-read-checked",
  text: `SELECT r.kind, r.key, r.value
         FROM ${RECORDS} AS r JOIN unnest($1::text[], $2::bytea[]) AS c(kind, key)
           ON r.kind = c.kind AND r.key = c.key
         FOR UPDATE OF r`,
};
