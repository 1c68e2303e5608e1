import { performance } from "node:perf_hooks";
import type { Metrics, StoreOperation } from "../common/telemetry.js";
import type { RecordType } from "./record.js";
import type { StorageFailure } from "./storage-failure.js";
import type { RangeOptions, Store, StoreBatch, WriteOptions } from "./store.js";

const since = (start: number) => (performance.now() - start) / 1000;

class MeasuredBatch implements StoreBatch {
  constructor(
    private readonly inner: StoreBatch,
    private readonly metrics: Metrics,
  ) {}

  get length(): number {
    return this.inner.length;
  }

  put<T>(type: RecordType<T>, key: string, value: T): this {
    this.inner.put(type, key, value);
    return this;
  }

  del<T>(type: RecordType<T>, key: string): this {
    this.inner.del(type, key);
    return this;
  }

  check<T>(
    type: RecordType<T>,
    key: string,
    holds: (current: T | undefined) => boolean,
    what: string,
  ): this {
    this.inner.check(type, key, holds, what);
    return this;
  }

  checkField<T>(
    type: RecordType<T>,
    key: string,
    field: keyof T & string,
    expected: string | number | boolean | undefined,
    what: string,
  ): this {
    this.inner.checkField(type, key, field, expected, what);
    return this;
  }

  async write(options?: WriteOptions): Promise<void> {
    const start = performance.now();
    try {
      await this.inner.write(options);
    } finally {
      this.metrics.storeOperation(options?.sync ? "write_synced" : "write", since(start));
    }
  }
}

/**
 * A store that times each operation into `metrics` (`parkway_store_operation_duration_seconds`) and
 * otherwise is `inner`. A scan is timed to its first record (or its end when it finds none): the
 * rest of a scan runs at its reader's pace.
 */
export class MeasuredStore implements Store {
  constructor(
    readonly inner: Store,
    private readonly metrics: Metrics,
  ) {}

  get location(): string {
    return this.inner.location;
  }

  get failure(): StorageFailure | undefined {
    return this.inner.failure;
  }

  open(): Promise<void> {
    return this.inner.open();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  async get<T>(type: RecordType<T>, key: string): Promise<T | undefined> {
    return this.timed("get", () => this.inner.get(type, key));
  }

  async getMany<T>(type: RecordType<T>, keys: readonly string[]): Promise<(T | undefined)[]> {
    return this.timed("get_many", () => this.inner.getMany(type, keys));
  }

  batch(): StoreBatch {
    return new MeasuredBatch(this.inner.batch(), this.metrics);
  }

  entries<T>(type: RecordType<T>, options?: RangeOptions): AsyncIterable<[string, T]> {
    return this.scan(this.inner.entries(type, options));
  }

  keys<T>(type: RecordType<T>, options?: RangeOptions): AsyncIterable<string> {
    return this.scan(this.inner.keys(type, options));
  }

  onFailure(listener: (failure: StorageFailure) => void): void {
    this.inner.onFailure(listener);
  }

  digest(): Promise<string> {
    return this.inner.digest();
  }

  private async timed<T>(operation: StoreOperation, fn: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await fn();
    } finally {
      this.metrics.storeOperation(operation, since(start));
    }
  }

  /**
   * Times `items` to its first record (or its end): only the first `next` is wrapped, so the
   * records after it pass through with no extra step.
   */
  private scan<T>(items: AsyncIterable<T>): AsyncIterable<T> {
    const metrics = this.metrics;
    return {
      [Symbol.asyncIterator]() {
        const iterator = items[Symbol.asyncIterator]();
        const next = iterator.next.bind(iterator);
        const start = performance.now();
        iterator.next = async () => {
          iterator.next = next;
          try {
            return await next();
          } finally {
            metrics.storeOperation("scan", since(start));
          }
        };
        return iterator;
      },
    };
  }
}
