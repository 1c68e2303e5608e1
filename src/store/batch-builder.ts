import { decodeRecord, encodeRecord, type RecordType, storedField } from "./record.js";
import { ConflictError } from "./storage-failure.js";
import type { StoreBatch, WriteOptions } from "./store.js";

/**
 * A condition of a batch on one stored record (`StoreBatch.check`), in the form a store evaluates
 * it: against the raw stored value when the batch is applied.
 */
export interface BatchCheck {
  readonly kind: string;
  readonly key: string;
  /** What the caller expects, for the `ConflictError`. */
  readonly what: string;
  /**
   * Whether the condition holds for the stored value (`undefined` when there is none). Throws
   * `RecordError` when the stored value cannot be read, and whatever the condition throws.
   */
  holds(raw: string | undefined): boolean;
}

/** How a store represents a put (of a value already encoded and validated) and a delete. */
export interface BatchEncoding<Op> {
  put(kind: string, key: string, value: string): Op;
  del(kind: string, key: string): Op;
}

/**
 * Hands a batch to the store's writes, behind every write issued before it: the checks are
 * evaluated when the batch's turn comes, then the operations applied, all or nothing.
 */
export type EnqueueBatch<Op> = (
  ops: Op[],
  checks: readonly BatchCheck[],
  sync: boolean,
  /** See `WriteOptions.relaxed`; never with `sync`. */
  relaxed: boolean,
) => Promise<void>;

const NO_CHECKS: readonly BatchCheck[] = [];

/**
 * A `StoreBatch` over a store's own operations: each put is encoded (and validated, so an invalid
 * record throws at once and nothing of its batch is written) when it is added; `write` hands the
 * operations and checks, in the order they were added, to the store. A batch with neither writes
 * nothing.
 */
class Batch<Op> implements StoreBatch {
  private readonly ops: Op[] = [];
  private checks: BatchCheck[] | undefined;

  constructor(
    private readonly encoding: BatchEncoding<Op>,
    private readonly enqueue: EnqueueBatch<Op>,
  ) {}

  put<T>(type: RecordType<T>, key: string, value: T): this {
    this.ops.push(this.encoding.put(type.kind, key, encodeRecord(type, key, value)));
    return this;
  }

  del<T>(type: RecordType<T>, key: string): this {
    this.ops.push(this.encoding.del(type.kind, key));
    return this;
  }

  check<T>(
    type: RecordType<T>,
    key: string,
    holds: (current: T | undefined) => boolean,
    what: string,
  ): this {
    return this.condition(type.kind, key, what, (raw) =>
      holds(raw === undefined ? undefined : decodeRecord(type, key, raw)),
    );
  }

  checkField<T>(
    type: RecordType<T>,
    key: string,
    field: keyof T & string,
    expected: string | number | boolean | undefined,
    what: string,
  ): this {
    return this.condition(
      type.kind,
      key,
      what,
      (raw) => (raw === undefined ? undefined : storedField(type, key, raw, field)) === expected,
    );
  }

  private condition(kind: string, key: string, what: string, holds: BatchCheck["holds"]): this {
    (this.checks ??= []).push({ kind, key, what, holds });
    return this;
  }

  get length(): number {
    return this.ops.length;
  }

  async write(options?: WriteOptions): Promise<void> {
    if (this.ops.length > 0 || this.checks) {
      const sync = options?.sync === true;
      await this.enqueue(
        this.ops,
        this.checks ?? NO_CHECKS,
        sync,
        !sync && options?.relaxed === true,
      );
    }
  }
}

/** Starts a batch for a store that encodes operations with `encoding` and writes with `enqueue`. */
export function buildBatch<Op>(encoding: BatchEncoding<Op>, enqueue: EnqueueBatch<Op>): StoreBatch {
  return new Batch(encoding, enqueue);
}

/**
 * The conflict of the first of `checks` that does not hold for the values `read` finds, or
 * undefined when every one holds. Throws what a check throws (a record that cannot be read).
 */
export function firstConflict(
  checks: readonly BatchCheck[],
  read: (kind: string, key: string) => string | undefined,
): ConflictError | undefined {
  for (const check of checks) {
    if (!check.holds(read(check.kind, check.key))) {
      return new ConflictError(check.kind, check.key, check.what);
    }
  }
  return undefined;
}
