import type { ClassicLevel } from "classic-level";
import { type BatchCheck, firstConflict } from "./batch-builder.js";
import { StorageFailure, StoreClosedError } from "./storage-failure.js";

/** One operation of a LevelDB write; its key carries its sublevel's prefix. */
export type LevelOp = { type: "put"; key: string; value: string } | { type: "del"; key: string };

/** classic-level's own write of a batch, under abstract-level's public `batch()`. */
type RawBatch = (ops: LevelOp[], options: { sync: boolean }) => Promise<void>;

/**
 * Hands `ops` to LevelDB in one write. The keys and values are strings already prefixed and encoded,
 * the database is open (the write loop checks it) and nothing listens for its writes (no hooks, no
 * `write` event), so classic-level's own `_batch` takes them as they are. abstract-level's public
 * `batch()` would first copy and check every operation and look its encodings up, which costs twice
 * the native call on a park's batch; it is used only when `_batch` is missing.
 */
function writeBatch(
  db: ClassicLevel<string, string>,
  ops: LevelOp[],
  sync: boolean,
): Promise<void> {
  const raw = (db as unknown as { _batch?: RawBatch })._batch;
  return typeof raw === "function" ? raw.call(db, ops, { sync }) : db.batch(ops, { sync });
}

/** A batch waiting for its turn to be written. */
interface QueuedWrite {
  ops: LevelOp[];
  /** Evaluated right before the batch is written; see `admit`. */
  checks: readonly BatchCheck[];
  sync: boolean;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** The store a `LevelWriteQueue` writes for. */
export interface LevelWriteTarget {
  readonly location: string;
  /** Its database. */
  db(): ClassicLevel<string, string>;
  /** The key, in the root, of the record `key` of kind `kind`. */
  keyOf(kind: string, key: string): string;
  /**
   * Adds to the operations of a write, right before it is handed to LevelDB, what the store puts
   * in every write; returns what to do once it is written.
   */
  stamp(ops: LevelOp[], sync: boolean): () => void;
}

/**
 * The writes of a LevelDB store. They go to LevelDB one at a time, in the order they were issued:
 * the batches issued while one is being written are joined into the next write (atomic all
 * together, synced when any asked for it), so nothing is ever handed to LevelDB after a write that
 * failed. A batch's checks are evaluated in that queue, against LevelDB as the writes before it
 * left it and the batches joined ahead of it into the same write; a batch whose check fails is left
 * out of the write and rejected with `ConflictError`, and the others are written. The first failure
 * stops the store for writes (see `Store`); LevelDB itself keeps accepting writes after a failed
 * log write, and appends them behind the partial record it left, where they are lost when the log
 * is replayed.
 */
export class LevelWriteQueue {
  private queue: QueuedWrite[] = [];
  /** The write loop, while it runs. */
  private writing: Promise<void> | undefined;
  private closed = false;
  private failed: StorageFailure | undefined;
  private readonly failureListeners: ((failure: StorageFailure) => void)[] = [];

  constructor(private readonly target: LevelWriteTarget) {}

  get failure(): StorageFailure | undefined {
    return this.failed;
  }

  onFailure(listener: (failure: StorageFailure) => void): void {
    if (this.failed) listener(this.failed);
    else this.failureListeners.push(listener);
  }

  /** Takes writes again, once the store is open. */
  reopen(): void {
    this.closed = false;
  }

  /** Refuses new writes and waits for those already issued. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.writing) await this.writing;
  }

  /** Queues a batch; the write loop starts at once when idle, so a lone write waits for nothing. */
  enqueue(ops: LevelOp[], checks: readonly BatchCheck[], sync: boolean): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.closed) return Promise.reject(new StoreClosedError(this.target.location));
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
      if (this.target.db().status !== "open") {
        const closed = new StoreClosedError(this.target.location);
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
      const written = this.target.stamp(ops, sync);
      try {
        await writeBatch(this.target.db(), ops, sync);
        written();
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
      const at = this.target.keyOf(kind, key);
      return ahead.has(at) ? ahead.get(at) : this.target.db().getSync(at);
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
    const failure = new StorageFailure(this.target.location, cause);
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
}
