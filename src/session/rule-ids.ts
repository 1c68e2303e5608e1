import { isoNow } from "../common/iso-now.js";
import type { Store, StoreBatch } from "../store/store.js";
import { RuleIdRecord, RuleIdsIndexedRecord, RuleRecord } from "./records.js";
import { recordKey } from "./rule-scope.js";

/** A rule as stored. */
type RuleRecordValue = NonNullable<Awaited<ReturnType<typeof readRule>>>;
const readRule = (store: Store, key: string) => store.get(RuleRecord, key);

/** Index records written per batch while a tenant's older rules are indexed. */
const INDEX_BATCH = 1000;

const idKey = (tenant: string, id: string) => `${tenant}/${id}`;

/** Puts the index record of a rule stored at `recordKey(tenant, scope, id)` into `batch`. */
export function indexRule(batch: StoreBatch, tenant: string, scope: string, id: string): void {
  batch.put(RuleIdRecord, idKey(tenant, id), { scope });
}

/** Deletes a rule's index record in `batch`. */
export function unindexRule(batch: StoreBatch, tenant: string, id: string): void {
  batch.del(RuleIdRecord, idKey(tenant, id));
}

/**
 * A tenant's stored rule by id, with its store key: two reads, however many rules the tenant has.
 * The first lookup in a tenant whose rules were stored before they were indexed by id reads them
 * all once and writes their index (then marks the tenant indexed); an id never stored is then not
 * found without a scan.
 */
export async function findRule(
  store: Store,
  tenant: string,
  id: string,
): Promise<{ key: string; rule: RuleRecordValue } | undefined> {
  const indexed = await store.get(RuleIdRecord, idKey(tenant, id));
  if (indexed) {
    const key = recordKey(tenant, indexed.scope, id);
    const rule = await readRule(store, key);
    return rule ? { key, rule } : undefined;
  }
  if (await store.get(RuleIdsIndexedRecord, tenant)) return undefined;
  return indexTenant(store, tenant, id);
}

/** Indexes every rule of `tenant` by id, returning the one with id `wanted`, if stored. */
async function indexTenant(
  store: Store,
  tenant: string,
  wanted: string,
): Promise<{ key: string; rule: RuleRecordValue } | undefined> {
  const prefix = `${tenant}/`;
  let found: { key: string; rule: RuleRecordValue } | undefined;
  let batch = store.batch();
  let pending = 0;
  for await (const [key, rule] of store.entries(RuleRecord, {
    gte: prefix,
    lt: `${prefix}\uffff`,
  })) {
    indexRule(batch, tenant, key.slice(prefix.length, key.length - rule.id.length - 1), rule.id);
    if (rule.id === wanted) found = { key, rule };
    if (++pending === INDEX_BATCH) {
      await batch.write();
      batch = store.batch();
      pending = 0;
    }
  }
  // The mark goes last and synced: a crash before it leaves the tenant to be indexed again.
  batch.put(RuleIdsIndexedRecord, tenant, { at: isoNow() });
  await batch.write({ sync: true });
  return found;
}

/**
 * Has every tenant's rules indexed by id again on its next lookup: after a repair that lost
 * records, a rule may be left without its index record (and could not be found by id).
 */
export async function reindexRuleIds(store: Store): Promise<void> {
  const batch = store.batch();
  for await (const tenant of store.keys(RuleIdsIndexedRecord)) {
    batch.del(RuleIdsIndexedRecord, tenant);
  }
  await batch.write({ sync: true });
}
