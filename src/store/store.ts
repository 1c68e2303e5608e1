import type { RecordType } from "./record.js";
import type { StorageFailure } from "./storage-failure.js";

/** Bounds and options of a key-ordered scan over one record kind. */
export interface RangeOptions {
  gt?: string;
  gte?: string;
  lt?: string;
  lte?: string;
  limit?: number;
  reverse?: boolean;
  /** Aborting stops the scan; the iterator then throws an AbortError. */
  signal?: AbortSignal;
}

/**
 * Writes applied together or not at all, optionally on condition (compare-and-set). Operations and
 * checks are collected here and take effect only with `write`.
 */
export interface StoreBatch {
  /** Writes `value` at `key`; throws `RecordError` at once when the value is invalid for `type`. */
  put<T>(type: RecordType<T>, key: string, value: T): this;
  del<T>(type: RecordType<T>, key: string): this;
  /**
   * Makes the batch conditional: when it is applied, `holds` is called with the record stored at
   * `key` (`undefined` when there is none) as every write issued before this batch left it, and
   * before any of this batch's own operations or of a later write. When a check does not hold,
   * nothing of the batch is written and `write` rejects with `ConflictError`, naming `what` (the
   * condition in words, e.g. "call_1 awaiting confirmation") and the key. A conflict, a record the
   * check cannot read, or an error thrown by `holds` rejects this batch only: it is no storage
   * failure, and the store goes on taking writes. Keep `holds` quick and free of side effects: it
   * runs inside the store's ordered writes.
   */
  check<T>(
    type: RecordType<T>,
    key: string,
    holds: (current: T | undefined) => boolean,
    what: string,
  ): this;
  /**
   * A `check` that holds when the stored record's top-level `field` equals `expected` (`===`;
   * `undefined` when there is no record or no such field). Only that field is read: the rest of
   * the record is not validated, so a condition on one scalar of a large record costs a JSON parse.
   */
  checkField<T>(
    type: RecordType<T>,
    key: string,
    field: keyof T & string,
    expected: string | number | boolean | undefined,
    what: string,
  ): this;
  /** The number of puts and deletes (checks not counted). */
  readonly length: number;
  /**
   * Commits every operation atomically, if every check holds (see `WriteOptions` for how durable
   * it is once it resolves). Rejects with `ConflictError` when a check did not hold, with
   * `StorageFailure` when the store failed (this write or an earlier one), and with
   * `StoreClosedError` once the store is closed. A batch with neither operations nor checks
   * resolves at once.
   */
  write(options?: WriteOptions): Promise<void>;
}

/** How durable a write is once it resolves. */
export interface WriteOptions {
  /**
   * On disk (fdatasync; in PostgreSQL, committed with `synchronous_commit` on). Without it, a
   * crash of the machine (not of the process) may lose the write in LevelDB; PostgreSQL commits
   * every write that is not `relaxed` as if it were synced.
   */
  sync?: boolean;
  /**
   * May be lost by a crash of the store itself, even in PostgreSQL, where a conditional write (one
   * with checks) commits with `synchronous_commit` off unless written together with writes that are
   * not relaxed; one without checks commits synced all the same. Only for records whose loss a later
   * write's check finds, such as a session's lease. Ignored with `sync`.
   */
  relaxed?: boolean;
}

/**
 * The durable state of Parkway, as the session core needs it; every backend (LevelDB, memory,
 * PostgreSQL) implements this and nothing more:
 *
 * - Typed records: values are records of a `RecordType`, stored in a version envelope, validated
 *   on read and (unless the record type opts out) on write. Keys are strings ordered bytewise
 *   within each record kind.
 * - Atomic batches: puts and deletes across kinds applied all together or not at all, optionally
 *   synced to disk before they resolve, and optionally conditional (`StoreBatch.check`:
 *   compare-and-set on the records as they are when the batch is applied; a transaction's
 *   conditional update in a SQL store).
 * - Order: writes are applied in the order they were issued; a write, and every check, sees every
 *   write issued before it, applied or not yet.
 * - Ordered range scans of one kind's entries or keys, forwards or backwards, bounded and
 *   abortable.
 * - Fail-stop: the first write that fails makes the store refuse every later write (each rejects
 *   with the same `StorageFailure`, and nothing more reaches the disk) until the process restarts;
 *   reads go on. A write issued after a failed one never lands behind it. A conflict (a check that
 *   did not hold) is not a failure.
 *
 * The session core's operations are these, composed (test/unit/store-session-operations.test.ts
 * checks each on every backend):
 *
 * - append events with their seq: `EventLog.putInto` puts a chunk of consecutive events at
 *   `<session>/<last seq>` into the batch that carries the state they belong to;
 * - checkpoint a reply: that batch also puts the reply record and the session's last seq;
 * - a synced batch: `write({ sync: true })`, for a park and for every answer (DESIGN §4);
 * - compare-and-set a call's state: `check` on the reply record (still this reply, the call still
 *   awaiting) in the answer's batch;
 * - read a range: `entries` from the chunk holding a seq; keys: `keys`, for compaction and deletion.
 */
export interface Store {
  /** Where the data lives, for messages. */
  readonly location: string;
  /**
   * Opens the store; throws `StoreLockedError` when another process holds it, and
   * `StoreDamagedError` (naming the file) when its files are damaged or it lost writes (LevelDB);
   * `DatabaseOpenError` when the database cannot be reached or used, and `SchemaTooNewError` when
   * its schema is newer than this server (PostgreSQL). Idempotent.
   */
  open(): Promise<void>;
  /** Closes the store after pending writes. Idempotent. */
  close(): Promise<void>;
  get<T>(type: RecordType<T>, key: string): Promise<T | undefined>;
  getMany<T>(type: RecordType<T>, keys: readonly string[]): Promise<(T | undefined)[]>;
  /** Starts an atomic, optionally conditional batch. */
  batch(): StoreBatch;
  /** Scans one record kind in key order. */
  entries<T>(type: RecordType<T>, options?: RangeOptions): AsyncIterable<[string, T]>;
  /** Scans the keys of one record kind in key order, without reading their values. */
  keys<T>(type: RecordType<T>, options?: RangeOptions): AsyncIterable<string>;
  /** The failure that stopped writes, once a write failed. */
  readonly failure: StorageFailure | undefined;
  /** Calls `listener` once, when the first write fails (at once if one already has). */
  onFailure(listener: (failure: StorageFailure) => void): void;
  /** A SHA-256 digest of every key and value stored, to tell whether anything changed. */
  digest(): Promise<string>;
}
