import { createHash } from "node:crypto";
import { ClassicLevel } from "classic-level";
import { ParkwayError } from "../common/errors.js";
import { checkDataDirectory, fileFailure } from "./data-directory.js";
import { type BatchEncoding, buildBatch, type EnqueueBatch } from "./batch-builder.js";
import { openLevel, StoreOpenError } from "./level-open.js";
import { type LevelOp, LevelWriteQueue } from "./level-write-queue.js";
import { decodeRecord, encodeRecord, type RecordType } from "./record.js";
import type { StorageFailure } from "./storage-failure.js";
import { type MarkerKeeper, type StoreData, STORE_KEY, StoreRecord } from "./store-marker.js";
import { verifyOpen } from "./verify-open.js";
import { LEVEL_TUNING, type LevelTuning } from "./level-tuning.js";
import type { RangeOptions, Store, StoreBatch } from "./store.js";

type Sublevel = ReturnType<ClassicLevel<string, string>["sublevel"]>;

/**
 * The embedded LevelDB store: one sublevel per record kind, JSON values in a version envelope,
 * atomic batches across kinds. LevelDB's lock makes a data directory single-process. Its writes
 * go to LevelDB one at a time through a `LevelWriteQueue`, which puts the store's marker in each.
 */
export class LevelStore implements Store {
  private instance: ClassicLevel<string, string> | undefined;
  private readonly sublevels = new Map<string, Sublevel>();
  private readonly writeQueue: LevelWriteQueue;
  /** The store's identity and write count, as put in every write (see `StoreRecord`). */
  private meta: StoreData | undefined;
  /** The count of the last synced write. */
  private syncedWrites = 0;
  private keeper: MarkerKeeper | undefined;
  /**
   * How batches (`buildBatch`) encode their operations: keys carry their sublevel's prefix, so a
   * batch is written in one call on the root.
   */
  private readonly encoding: BatchEncoding<LevelOp> = {
    put: (kind, key, value) => ({ type: "put", key: this.sub(kind).prefix + key, value }),
    del: (kind, key) => ({ type: "del", key: this.sub(kind).prefix + key }),
  };
  private readonly enqueueBatch: EnqueueBatch<LevelOp> = (ops, checks, sync) =>
    this.writeQueue.enqueue(ops, checks, sync);

  constructor(
    readonly location: string,
    private readonly tuning: Readonly<LevelTuning> = LEVEL_TUNING,
  ) {
    this.writeQueue = new LevelWriteQueue({
      location,
      db: () => this.db,
      keyOf: (kind, key) => this.sub(kind).prefix + key,
      stamp: (ops, sync) => this.stamp(ops, sync),
    });
  }

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
    this.writeQueue.reopen();
  }

  /** `verifyOpen` on this database; a failing file operation is diagnosed as LevelDB's open is. */
  private async verifyOpen(accept: boolean): ReturnType<typeof verifyOpen> {
    const key = () => this.sub(StoreRecord.kind).prefix + STORE_KEY;
    try {
      return await verifyOpen(this.location, accept, {
        open: () => openLevel(this.location, this.tuning, () => this.db),
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

  /** How many writes the store has handed to LevelDB since it was created. */
  get writes(): number {
    return this.meta?.writes ?? 0;
  }

  /**
   * Refuses new writes, waits for those already issued, makes them durable and records their count
   * in the marker (unless a write failed), then closes LevelDB.
   */
  async close(): Promise<void> {
    await this.writeQueue.close();
    const meta = this.meta;
    if (meta && this.instance?.status === "open" && !this.writeQueue.failure) {
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
    return this.writeQueue.failure;
  }

  onFailure(listener: (failure: StorageFailure) => void): void {
    this.writeQueue.onFailure(listener);
  }

  /**
   * Puts the store's marker, its write count one up, in a write about to be handed to LevelDB; once
   * written, the count is the store's (and, when synced, the synced one's).
   */
  private stamp(ops: LevelOp[], sync: boolean): () => void {
    const meta = this.meta ? { ...this.meta, writes: this.meta.writes + 1 } : undefined;
    if (meta) {
      ops.push({
        type: "put",
        key: this.sub(StoreRecord.kind).prefix + STORE_KEY,
        value: encodeRecord(StoreRecord, STORE_KEY, meta),
      });
    }
    return () => {
      if (meta) this.meta = meta;
      if (meta && sync) {
        this.syncedWrites = meta.writes;
        this.keeper?.synced(meta.writes);
      }
    };
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
