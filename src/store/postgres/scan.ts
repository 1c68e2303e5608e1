import { createHash } from "node:crypto";
import type { Pool } from "pg";
import type { RangeOptions } from "../store.js";
import { RECORDS } from "./schema.js";
import { keyBytes } from "./writer.js";

/** Rows a scan reads per query, unless the store is given another page size. */
export const DEFAULT_PAGE_ROWS = 500;

/**
 * The rows of one kind within `range`, in key order (bytewise: keys are stored as UTF-8 bytes),
 * read a page at a time with keyset queries: each page starts after the last key of the one
 * before, on the primary key's index, so a scan holds one page in memory and costs the same at any
 * depth. Each page is a query of its own: a scan sees the writes committed while it runs beyond
 * the page it is on, as a LevelDB iterator sees none (no caller relies on either). Aborting
 * `range.signal` stops the scan with its AbortError.
 */
export async function* scanRows(
  pool: Pool,
  kind: string,
  range: RangeOptions,
  withValues: boolean,
  pageRows: number,
): AsyncGenerator<{ key: string; value: string }> {
  const bounds: string[] = [];
  const ops: string[] = [];
  const values: unknown[] = [kind];
  const bound = (op: string, name: string, key: string | undefined) => {
    if (key === undefined) return;
    values.push(keyBytes(key));
    bounds.push(`key ${op} $${values.length}`);
    ops.push(name);
  };
  bound(">", "g", range.gt);
  bound(">=", "G", range.gte);
  bound("<", "l", range.lt);
  bound("<=", "L", range.lte);
  const reverse = range.reverse === true;
  const cursorAt = values.length + 1;
  const limitAt = values.length + 2;
  // One prepared statement per shape (which bounds, which order, a page after the first): named by
  // the shape, each connection parses and plans it once.
  const shape = `${withValues ? "v" : "k"}${reverse ? "d" : "a"}${ops.join("")}`;
  const query = (cursor: boolean) => ({
    name: `parkway-scan-${shape}${cursor ? "c" : ""}`,
    text: `SELECT key${withValues ? ", value" : ""} FROM ${RECORDS}
     WHERE kind = $1${bounds.map((b) => ` AND ${b}`).join("")}${
       cursor ? ` AND key ${reverse ? "<" : ">"} $${cursorAt}` : ""
     }
     ORDER BY key ${reverse ? "DESC" : "ASC"} LIMIT $${cursor ? limitAt : cursorAt}`,
  });
  let left = range.limit !== undefined && range.limit >= 0 ? range.limit : Infinity;
  let cursor: Buffer | undefined;
  while (left > 0) {
    range.signal?.throwIfAborted();
    const rows = Math.min(pageRows, left);
    const page = await pool.query<{ key: Buffer; value?: string }>({
      ...query(cursor !== undefined),
      values: cursor === undefined ? [...values, rows] : [...values, cursor, rows],
    });
    for (const row of page.rows) {
      range.signal?.throwIfAborted();
      yield { key: row.key.toString("utf8"), value: row.value ?? "" };
    }
    left -= page.rows.length;
    if (page.rows.length < rows) return;
    cursor = page.rows[page.rows.length - 1]?.key;
  }
}

/** A SHA-256 digest of every row, kind by kind in key order, read a page at a time. */
export async function digestRows(pool: Pool, pageRows: number): Promise<string> {
  const hash = createHash("sha256");
  let after: [string, Buffer] | undefined;
  for (;;) {
    const page = await pool.query<{ kind: string; key: Buffer; value: string }>(
      `SELECT kind, key, value FROM ${RECORDS}
       ${after ? "WHERE (kind, key) > ($2::text, $3::bytea)" : ""}
       ORDER BY kind, key LIMIT $1`,
      after ? [pageRows, ...after] : [pageRows],
    );
    for (const row of page.rows) {
      hash.update(`!${row.kind}!`).update(row.key).update("\0").update(row.value).update("\0");
    }
    const last = page.rows[page.rows.length - 1];
    if (!last || page.rows.length < pageRows) break;
    after = [last.kind, last.key];
  }
  return hash.digest("hex");
}
