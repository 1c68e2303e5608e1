import { setTimeout as sleep } from "node:timers/promises";
import { ConflictError } from "../store/storage-failure.js";
import type { Store, StoreBatch } from "../store/store.js";
import { TenantCountRecord } from "./records.js";

/** Makes a batch apply only while the tenant's stored count is still the one read. */
export type CountGuard = (batch: StoreBatch) => void;

/**
 * How many sessions each tenant has: read once from the tenant's counter record, then kept in
 * memory. Changes to one tenant's count run one at a time, so concurrent creates cannot pass a
 * limit together, and the record written with each change is always the count after it. Shared by
 * several nodes (`shared`), the count is read from the store for each change and written only if
 * no other node changed it meanwhile (compare-and-set; a change that lost the race runs again).
 */
export class TenantSessionCount {
  private readonly counts = new Map<string, number>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: Store,
    private readonly shared = false,
  ) {}

  /**
   * Runs `change` with the tenant's count, alone among the changes of this node for that tenant.
   * `change` writes its batch (with the counter record for the count it returns, and `guard`)
   * and returns the new count; the count is kept only once it resolves.
   */
  update<T>(
    tenant: string,
    change: (count: number, guard: CountGuard) => Promise<{ count: number; result: T }>,
  ): Promise<T> {
    const run = async (): Promise<T> => {
      for (let attempt = 1; ; attempt++) {
        const read = await this.read(tenant);
        const guard: CountGuard = (batch) =>
          batch.check(TenantCountRecord, tenant, (r) => (r?.sessions ?? 0) === read, "the count");
        try {
          const { count, result } = await change(read, guard);
          this.counts.set(tenant, count);
          return result;
        } catch (err) {
          if (!(err instanceof ConflictError) || !this.shared || attempt >= 20) throw err;
          // Another node changed the count meanwhile: read it again, after a moment.
          await sleep(Math.random() * 5 * attempt);
        }
      }
    };
    const previous = this.queues.get(tenant) ?? Promise.resolve(); // never rejects
    const next = previous.then(run);
    const settledNext = next.catch(() => undefined);
    this.queues.set(tenant, settledNext);
    void settledNext.then(() => {
      if (this.queues.get(tenant) === settledNext) this.queues.delete(tenant);
    });
    return next;
  }

  private async read(tenant: string): Promise<number> {
    let count = this.shared ? undefined : this.counts.get(tenant);
    if (count === undefined) {
      count = (await this.store.get(TenantCountRecord, tenant))?.sessions ?? 0;
      this.counts.set(tenant, count);
    }
    return count;
  }
}
