import type { Store } from "../store/store.js";
import { TenantCountRecord } from "./records.js";

/**
 * How many sessions each tenant has: read once from the tenant's counter record, then kept in
 * memory. Changes to one tenant's count run one at a time, so concurrent creates cannot pass a
 * limit together, and the record written with each change is always the count after it.
 */
export class TenantSessionCount {
  private readonly counts = new Map<string, number>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly store: Store) {}

  /**
   * Runs `change` with the tenant's count, alone among the changes of that tenant. `change` writes
   * its batch (with the counter record for the count it returns) and returns the new count; the
   * count is kept only once it resolves.
   */
  update<T>(
    tenant: string,
    change: (count: number) => Promise<{ count: number; result: T }>,
  ): Promise<T> {
    const run = async (): Promise<T> => {
      const { count, result } = await change(await this.read(tenant));
      this.counts.set(tenant, count);
      return result;
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
    let count = this.counts.get(tenant);
    if (count === undefined) {
      count = (await this.store.get(TenantCountRecord, tenant))?.sessions ?? 0;
      this.counts.set(tenant, count);
    }
    return count;
  }
}
