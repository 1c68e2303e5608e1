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

/** Writes applied together or not at all. */
export interface StoreBatch {
  put<T>(type: RecordType<T>, key: string, value: T): this;
  del<T>(type: RecordType<T>, key: string): this;
  readonly length: number;
  /**
   * Commits every operation atomically. With `sync`, resolves only once the write is on disk
   * (fdatasync); without it, a crash of the machine (not of the process) may lose it. Rejects with
   * `StorageFailure` when the store failed (this write or an earlier one), and with
   * `StoreClosedError` once the store is closed.
   */
  write(options?: { sync?: boolean }): Promise<void>;
}

/**
 * The durable state of Parkway. Values are typed records, validated on read and (unless the record
 * type opts out) on write. Keys are strings ordered bytewise within each record kind.
 *
 * Fail-stop: the first write that fails makes the store refuse every later write (each rejects
 * with the same `StorageFailure`, and nothing more reaches the disk) until the process restarts;
 * reads go on. Writes are applied in the order they were issued, so a write issued after a failed
 * one never lands behind it.
 */
export interface Store {
  /** Where the data lives, for messages. */
  readonly location: string;
  /**
   * Opens the store; throws `StoreLockedError` when another process holds it, and
   * `StoreDamagedError` (naming the file) when its files are damaged or it lost writes. Idempotent.
   */
  open(): Promise<void>;
  /** Closes the store after pending writes. Idempotent. */
  close(): Promise<void>;
  get<T>(type: RecordType<T>, key: string): Promise<T | undefined>;
  getMany<T>(type: RecordType<T>, keys: readonly string[]): Promise<(T | undefined)[]>;
  /** Starts an atomic batch. */
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
