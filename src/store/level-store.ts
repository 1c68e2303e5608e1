import { createHash } from "node:crypto";
import { ClassicLevel } from "classic-level";
import { ParkwayError } from "../common/errors.js";
import { checkDataDirectory, createDataDirectory, fileFailure } from "./data-directory.js";
import {
  type BatchCheck,
  type BatchEncoding,
  buildBatch,
  type EnqueueBatch,
  firstConflict,
} from "./batch-builder.js";
import { decodeRecord, encodeRecord, type RecordType } from "./record.js";
import { StorageFailure, StoreClosedError } from "./storage-failure.js";
import { type MarkerKeeper, type StoreData, STORE_KEY, StoreRecord } from "./store-marker.js";
import { verifyOpen } from "./verify-open.js";
import { LEVEL_TUNING, type LevelTuning } from "./level-tuning.js";
import type { RangeOptions, Store, StoreBatch } from "./store.js";

type Sublevel = ReturnType<ClassicLevel<string, string>["sublevel"]>;

type Op = { type: "put"; key: string; value: string } | { type: "del"; key: string };

/** classic-level's own write of a batch, under abstract-level's public `batch()`. */
type RawBatch = (ops: Op[], options: { sync: boolean }) => Promise<void>;

/**
 * Hands `ops` to LevelDB in one write. The keys and values are strings already prefixed and encoded,
 * the database is open (the write loop checks it) and nothing listens for its writes (no hooks, no
 * `write` event), so classic-level's own `_batch` takes them as they are. abstract-level's public
 * `batch()` would first copy and check every operation and look its encodings up, which costs twice
 * the native call on a park's batch; it is used only when `_batch` is missing.
 */
function writeBatch(db: ClassicLevel<string, string>, ops: Op[], sync: boolean): Promise<void> {
  const raw = (db as unknown as { _batch?: RawBatch })._batch;
  return typeof raw === "function" ? raw.call(db, ops, { sync }) : db.batch(ops, { sync });
}

/** A batch waiting for its turn to be written. */
interface QueuedWrite {
  ops: Op[];
  /** Evaluated right before the batch is written; see `admit`. */
  checks: readonly BatchCheck[];
  sync: boolean;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** The data directory is held by another process. */
export class StoreLockedError extends ParkwayError {
  constructor(readonly location: string) {
    super("unavailable", `data directory ${location} is in use by another Parkway server`);
  }
}

/**
 * LevelDB could not open the data directory for an I/O error although the directory itself is
 * usable (a disk too full for the new log, table or MANIFEST that opening writes, a failing device),
 * or writing the store's marker file while opening failed.
 */
export class StoreOpenError extends ParkwayError {
  constructor(
    readonly location: string,
    cause: Error,
  ) {
    super("unavailable", `cannot open the store in ${location}: ${cause.message}`, {}, { cause });
  }
}

/**
 * The embedded LevelDB store: one sublevel per record kind, JSON values in a version envelope,
 * atomic batches across kinds. LevelDB's lock makes a data directory single-process.
 *
 * Writes go to LevelDB one at a time, in the order they were issued: the batches issued while one
 * is being written are joined into the next write (atomic all together, synced when any asked for
 * it), so nothing is ever handed to LevelDB after a write that failed. A batch's checks are
 * evaluated in that queue, against LevelDB as the writes before it left it and the batches joined
 * ahead of it into the same write; a batch whose check fails is left out of the write and rejected
 * with `ConflictError`, and the others are written. The first failure stops the store for writes
 * (see `Store`); LevelDB itself keeps accepting writes after a failed log write, and appends them
 * behind the partial record it left, where they are lost when the log is replayed.
 */
export class LevelStore implements Store {
  private instance: ClassicLevel<string, string> | undefined;
  private readonly sublevels = new Map<string, Sublevel>();
  private queue: QueuedWrite[] = [];
  /** The write loop, while it runs. */
  private writing: Promise<void> | undefined;
  private closed = false;
  private failed: StorageFailure | undefined;
  private readonly failureListeners: ((failure: StorageFailure) => void)[] = [];
  /** The store's identity and write count, as put in every write (see `StoreRecord`). */
  private meta: StoreData | undefined;
  /** The count of the last synced write. */
  private syncedWrites = 0;
  private keeper: MarkerKeeper | undefined;
  /**
   * How batches (`buildBatch`) encode their operations: keys carry their sublevel's prefix, so a
   * batch is written in one call on the root.
   */
  private readonly encoding: BatchEncoding<Op> = {
    put: (kind, key, value) => ({ type: "put", key: this.sub(kind).prefix + key, value }),
    del: (kind, key) => ({ type: "del", key: this.sub(kind).prefix + key }),
  };
  private readonly enqueueBatch: EnqueueBatch<Op> = (ops, checks, sync) =>
    this.enqueue(ops, checks, sync);

  constructor(
    readonly location: string,
    private readonly tuning: Readonly<LevelTuning> = LEVEL_TUNING,
  ) {}

  /**
   * The database, made on first use: a classic-level database starts opening itself (creating its
   * directory) as soon as it is made, and nothing may touch the data directory before `open`.
   */
  private get db(): ClassicLevel<string, string> {
    this.instance ??= new ClassicLevel<string, string>(this.location, {
      keyEncoding: "utf8",
      valueEncoding: "utf8",
    });
    return this.instance;
  }

  /**
   * Opens the database, creating the directory when missing. When that fails for want of a usable
   * directory (read-only, no permission, a file in the way), throws `DataDirectoryError` naming the
   * path and the errno; for another I/O error (a full disk), `StoreOpenError` with LevelDB's words.
   * When the files are damaged or the store holds less than it once did (see `verifyOpen`), throws
   * `StoreDamagedError` naming the file; with `accept` (after a repair), the store is taken as it is
   * now and its marker reset to it.
   */
  async open(options: { accept?: boolean } = {}): Promise<void> {
    if (this.meta && this.instance?.status === "open") return;
    const opened = await this.verifyOpen(options.accept === true);
    this.meta = opened.data;
    this.syncedWrites = opened.data.writes;
    this.keeper = opened.keeper;
    this.closed = false;
  }

  /** `verifyOpen` on this database; a failing file operation is diagnosed as LevelDB's open is. */
  private async verifyOpen(accept: boolean): ReturnType<typeof verifyOpen> {
    const key = () => this.sub(StoreRecord.kind).prefix + STORE_KEY;
    try {
      return await verifyOpen(this.location, accept, {
        open: () => this.openLevel(),
        close: () => this.db.close(),
        read: () => {
          const raw = this.db.getSync(key());
          return raw === undefined ? undefined : decodeRecord(StoreRecord, STORE_KEY, raw);
        },
        write: (data) =>
          this.db.put(key(), encodeRecord(StoreRecord, STORE_KEY, data), { sync: true }),
      });
    } catch (err) {
      if (err instanceof ParkwayError) throw err;
      const problem = await checkDataDirectory(this.location);
      if (problem) throw problem;
      // A file operation of the open itself (the store's marker file) failed, a full disk say.
      const code = (err as NodeJS.ErrnoException).code;
      if (code?.startsWith("E")) throw new StoreOpenError(this.location, fileFailure(err as Error));
      throw err;
    }
  }

  private async openLevel(): Promise<void> {
    // Made here first: LevelDB's own recursive mkdir never settles where a level cannot be made.
    const missing = await createDataDirectory(this.location);
    if (missing) throw missing;
    try {
      await this.db.open({ createIfMissing: true, ...this.tuning });
    } catch (err) {
      const cause = (err as { cause?: Error & { code?: string } }).cause;
      if (cause?.code === "LEVEL_LOCKED") throw new StoreLockedError(this.location);
      const problem = await checkDataDirectory(this.location);
      if (problem) throw problem;
      if (cause?.code === "LEVEL_IO_ERROR") throw new StoreOpenError(this.location, cause);
      throw err;
    }
  }

  /** How many writes the store has handed to LevelDB since it was created. */
  get writes(): number {
    return this.meta?.writes ?? 0;
  }

  /**
   * Refuses new writes, waits for those already issued, makes them durable and records their count
   * in the marker (unless a write failed), then closes LevelDB.
   */
  async close(): Promise<void> {
    this.closed = true;
    while (this.writing) await this.writing;
    const meta = this.meta;
    if (meta && this.instance?.status === "open" && !this.failed) {
      if (meta.writes > this.syncedWrites) {
        const key = this.sub(StoreRecord.kind).prefix + STORE_KEY;
        await this.db
          .put(key, encodeRecord(StoreRecord, STORE_KEY, meta), { sync: true })
          .then(() => (this.syncedWrites = meta.writes))
          .catch(() => undefined);
      }
      await this.keeper?.close(this.syncedWrites);
    } else {
      await this.keeper?.close();
    }
    await this.instance?.close();
  }

  get failure(): StorageFailure | undefined {
    return this.failed;
  }

  onFailure(listener: (failure: StorageFailure) => void): void {
    if (this.failed) listener(this.failed);
    else this.failureListeners.push(listener);
  }

  /** Queues a batch; the write loop starts at once when idle, so a lone write waits for nothing. */
  private enqueue(ops: Op[], checks: readonly BatchCheck[], sync: boolean): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.closed) return Promise.reject(new StoreClosedError(this.location));
    const done = new Promise<void>((resolve, reject) =>
      this.queue.push({ ops, checks, sync, resolve, reject }),
    );
    if (!this.writing) this.startWriting();
    return done;
  }

  /**
   * Runs the write loop. A loop can end without waiting for anything (when every batch it took was
   * refused), so batches queued before it is marked as ended start it again.
   */
  private startWriting(): void {
    this.writing = this.writeQueued().finally(() => {
      this.writing = undefined;
      if (this.queue.length > 0) this.startWriting();
    });
  }

  /** Writes the queue in order, each time all that waits as one batch, until it is empty. */
  private async writeQueued(): Promise<void> {
    while (this.queue.length > 0) {
      let group = this.queue;
      this.queue = [];
      if (this.failed) {
        for (const w of group) w.reject(this.failed);
        continue;
      }
      if (this.db.status !== "open") {
        const closed = new StoreClosedError(this.location);
        for (const w of group) w.reject(closed);
        continue;
      }
      if (group.some((w) => w.checks.length > 0)) {
        group = this.admit(group);
        if (!group.some((w) => w.ops.length > 0)) {
          for (const w of group) w.resolve();
          continue;
        }
      }
      const ops = group.flatMap((w) => w.ops);
      const sync = group.some((w) => w.sync);
      const meta = this.meta ? { ...this.meta, writes: this.meta.writes + 1 } : undefined;
      if (meta) {
        ops.push({
          type: "put",
          key: this.sub(StoreRecord.kind).prefix + STORE_KEY,
          value: encodeRecord(StoreRecord, STORE_KEY, meta),
        });
      }
      try {
        await writeBatch(this.db, ops, sync);
        if (meta) this.meta = meta;
        if (meta && sync) {
          this.syncedWrites = meta.writes;
          this.keeper?.synced(meta.writes);
        }
      } catch (err) {
        const failure = this.fail(err);
        for (const w of group) w.reject(failure);
        continue;
      }
      for (const w of group) w.resolve();
    }
  }

  /**
   * The writes of `group` whose checks hold, in order. Each batch's checks read LevelDB as the
   * earlier writes left it, overlaid with the operations of the batches admitted ahead of it in
   * `group` (joined into the same LevelDB write, so not in LevelDB yet). A batch whose check does
   * not hold (or cannot be evaluated) is rejected and left out; the store stays writable.
   */
  private admit(group: QueuedWrite[]): QueuedWrite[] {
    const ahead = new Map<string, string | undefined>();
    const read = (kind: string, key: string): string | undefined => {
      const at = this.sub(kind).prefix + key;
      return ahead.has(at) ? ahead.get(at) : this.db.getSync(at);
    };
    const admitted: QueuedWrite[] = [];
    for (const w of group) {
      let refused: unknown;
      try {
        refused = firstConflict(w.checks, read);
      } catch (err) {
        refused = err ?? new Error("check failed");
      }
      if (refused) {
        w.reject(refused);
        continue;
      }
      for (const op of w.ops) ahead.set(op.key, op.type === "put" ? op.value : undefined);
      admitted.push(w);
    }
    return admitted;
  }

  /** Records the first failure and tells the listeners; later writes are refused with it. */
  private fail(cause: unknown): StorageFailure {
    if (this.failed) return this.failed;
    const failure = new StorageFailure(this.location, cause);
    this.failed = failure;
    const listeners = this.failureListeners.splice(0);
    for (const listener of listeners) {
      try {
        listener(failure);
      } catch {
        // A listener's own failure must not hide the storage failure from the others.
      }
    }
    return failure;
  }

  private sub(kind: string): Sublevel {
    let sub = this.sublevels.get(kind);
    if (!sub) {
      sub = this.db.sublevel(kind, { keyEncoding: "utf8", valueEncoding: "utf8" });
      this.sublevels.set(kind, sub);
    }
    return sub;
  }

  /**
   * Point reads are synchronous inside (LevelDB's caches answer them faster than a round trip to
   * the thread pool); ranges and writes stay asynchronous.
   */
  // eslint-disable-next-line @typescript-eslint/require-await -- a promise, as the Store promises
  async get<T>(type: RecordType<T>, key: string): Promise<T | undefined> {
    const raw = this.db.getSync(this.sub(type.kind).prefix + key);
    return raw === undefined ? undefined : decodeRecord(type, key, raw);
  }

  async getMany<T>(type: RecordType<T>, keys: readonly string[]): Promise<(T | undefined)[]> {
    const raws = await this.sub(type.kind).getMany([...keys]);
    return raws.map((raw, i) =>
      raw === undefined ? undefined : decodeRecord(type, keys[i] ?? "", raw as string),
    );
  }

  batch(): StoreBatch {
    return buildBatch(this.encoding, this.enqueueBatch);
  }

  async digest(): Promise<string> {
    const hash = createHash("sha256");
    for await (const [key, value] of this.db.iterator({
      keyEncoding: "utf8",
      valueEncoding: "utf8",
    })) {
      hash.update(key).update("\0").update(value).update("\0");
    }
    return hash.digest("hex");
  }

  async *entries<T>(type: RecordType<T>, options: RangeOptions = {}): AsyncIterable<[string, T]> {
    const { signal, ...range } = options;
    const iterator = this.sub(type.kind).iterator({ ...range, ...(signal ? { signal } : {}) });
    try {
      for await (const [key, raw] of iterator) {
        yield [key, decodeRecord(type, key, raw as string)];
      }
    } finally {
      await iterator.close();
    }
  }

  async *keys<T>(type: RecordType<T>, options: RangeOptions = {}): AsyncIterable<string> {
    const { signal, ...range } = options;
    const iterator = this.sub(type.kind).keys({ ...range, ...(signal ? { signal } : {}) });
    try {
      for await (const key of iterator) yield key;
    } finally {
      await iterator.close();
    }
  }
}

/** Creates the LevelDB store for a data directory. */
export function createLevelStore(location: string, tuning?: Readonly<LevelTuning>): Store {
  return new LevelStore(location, tuning);
}
