import { createHash } from "node:crypto";
import {
  type BatchCheck,
  type BatchEncoding,
  buildBatch,
  type EnqueueBatch,
  firstConflict,
} from "./batch-builder.js";
import { decodeRecord, type RecordType } from "./record.js";
import { StorageFailure, StoreClosedError } from "./storage-failure.js";
import type { RangeOptions, Store, StoreBatch } from "./store.js";

type Op =
  | { type: "put"; kind: string; key: string; value: string }
  | { type: "del"; kind: string; key: string };

/** Keys ordered bytewise (UTF-8), as LevelDB orders them. */
const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

function inRange(key: string, range: RangeOptions): boolean {
  if (range.gt !== undefined && byBytes(key, range.gt) <= 0) return false;
  if (range.gte !== undefined && byBytes(key, range.gte) < 0) return false;
  if (range.lt !== undefined && byBytes(key, range.lt) >= 0) return false;
  if (range.lte !== undefined && byBytes(key, range.lte) > 0) return false;
  return true;
}

/**
 * A store in memory with the LevelDB store's contract: records encoded and validated the same way,
 * atomic batches applied in the order they were issued, each checked (`StoreBatch.check`) right
 * before it applies, bytewise key order, fail-stop after the first failed write. Nothing survives
 * the process. For tests and embedders that need no durability; `failNextWrite` and `delayWrites`
 * make it behave like a failing or slow disk.
 */
export class MemoryStore implements Store {
  private readonly kinds = new Map<string, Map<string, string>>();
  /** Writes run one after another, in the order they were issued. */
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  private failed: StorageFailure | undefined;
  private readonly failureListeners: ((failure: StorageFailure) => void)[] = [];
  private injected: Error | undefined;
  private delayMs = 0;
  /** Writes applied, and how many of them asked to be synced. */
  readonly writes = { applied: 0, synced: 0 };
  /** How batches (`buildBatch`) encode their operations and hand them to `enqueue`. */
  private readonly encoding: BatchEncoding<Op> = {
    put: (kind, key, value) => ({ type: "put", kind, key, value }),
    del: (kind, key) => ({ type: "del", kind, key }),
  };
  private readonly enqueueBatch: EnqueueBatch<Op> = (ops, checks, sync) =>
    this.enqueue(ops, checks, sync);

  constructor(readonly location = "memory") {}

  open(): Promise<void> {
    this.closed = false;
    return Promise.resolve();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.chain;
  }

  get failure(): StorageFailure | undefined {
    return this.failed;
  }

  onFailure(listener: (failure: StorageFailure) => void): void {
    if (this.failed) listener(this.failed);
    else this.failureListeners.push(listener);
  }

  /**
   * A new store holding every write applied so far and nothing issued after: what a process that
   * died now would find on restart. It starts open, with no failure and no injected faults.
   */
  snapshot(): MemoryStore {
    const copy = new MemoryStore(this.location);
    for (const [kind, table] of this.kinds) copy.kinds.set(kind, new Map(table));
    return copy;
  }

  /** Makes the next write fail with `error` (an I/O error by default); the store then stops. */
  failNextWrite(error: Error = new Error("IO error: No space left on device")): void {
    this.injected = error;
  }

  /** Makes every later write take `ms` before it applies. */
  delayWrites(ms: number): void {
    this.delayMs = ms;
  }

  private table(kind: string): Map<string, string> {
    let table = this.kinds.get(kind);
    if (!table) {
      table = new Map();
      this.kinds.set(kind, table);
    }
    return table;
  }

  get<T>(type: RecordType<T>, key: string): Promise<T | undefined> {
    const raw = this.kinds.get(type.kind)?.get(key);
    return Promise.resolve(raw === undefined ? undefined : decodeRecord(type, key, raw));
  }

  getMany<T>(type: RecordType<T>, keys: readonly string[]): Promise<(T | undefined)[]> {
    const table = this.kinds.get(type.kind);
    return Promise.resolve(
      keys.map((key) => {
        const raw = table?.get(key);
        return raw === undefined ? undefined : decodeRecord(type, key, raw);
      }),
    );
  }

  batch(): StoreBatch {
    return buildBatch(this.encoding, this.enqueueBatch);
  }

  /**
   * Chains a batch behind the writes issued before it. Its checks are evaluated when its turn
   * comes, before an injected fault: a conflict refuses the batch alone (the fault stays for the
   * next write), as in the LevelDB store.
   */
  private enqueue(ops: Op[], checks: readonly BatchCheck[], sync: boolean): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.closed) return Promise.reject(new StoreClosedError(this.location));
    const write = this.chain.then(async () => {
      if (this.failed) throw this.failed;
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      if (checks.length > 0) {
        const conflict = firstConflict(checks, (kind, key) => this.kinds.get(kind)?.get(key));
        if (conflict) throw conflict;
        if (ops.length === 0) return;
      }
      const injected = this.injected;
      if (injected) {
        this.injected = undefined;
        throw this.fail(injected);
      }
      for (const op of ops) {
        if (op.type === "put") this.table(op.kind).set(op.key, op.value);
        else this.kinds.get(op.kind)?.delete(op.key);
      }
      this.writes.applied += 1;
      if (sync) this.writes.synced += 1;
    });
    this.chain = write.catch(() => undefined);
    return write;
  }

  private fail(cause: unknown): StorageFailure {
    if (this.failed) return this.failed;
    this.failed = new StorageFailure(this.location, cause);
    for (const listener of this.failureListeners.splice(0)) {
      try {
        listener(this.failed);
      } catch {
        // a listener's own error does not change the failure
      }
    }
    return this.failed;
  }

  /** The keys of one kind within `range`, in order, as they are when the scan starts. */
  private scan(kind: string, range: RangeOptions): string[] {
    const keys = [...(this.kinds.get(kind)?.keys() ?? [])].filter((k) => inRange(k, range));
    keys.sort(byBytes);
    if (range.reverse) keys.reverse();
    return range.limit !== undefined && range.limit >= 0 ? keys.slice(0, range.limit) : keys;
  }

  async *entries<T>(type: RecordType<T>, options: RangeOptions = {}): AsyncIterable<[string, T]> {
    const table = this.kinds.get(type.kind);
    for (const key of this.scan(type.kind, options)) {
      await Promise.resolve();
      options.signal?.throwIfAborted();
      const raw = table?.get(key);
      if (raw !== undefined) yield [key, decodeRecord(type, key, raw)];
    }
  }

  async *keys<T>(type: RecordType<T>, options: RangeOptions = {}): AsyncIterable<string> {
    for (const key of this.scan(type.kind, options)) {
      await Promise.resolve();
      options.signal?.throwIfAborted();
      yield key;
    }
  }

  digest(): Promise<string> {
    const hash = createHash("sha256");
    const rows = [...this.kinds].flatMap(([kind, table]) =>
      [...table].map(([key, value]) => [`!${kind}!${key}`, value] as const),
    );
    rows.sort(([a], [b]) => byBytes(a, b));
    for (const [key, value] of rows) hash.update(key).update("\0").update(value).update("\0");
    return Promise.resolve(hash.digest("hex"));
  }
}

/** Creates a store that keeps everything in memory (see `MemoryStore`). */
export function createMemoryStore(location?: string): MemoryStore {
  return new MemoryStore(location);
}
