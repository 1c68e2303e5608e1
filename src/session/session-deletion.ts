import type { Store, StoreBatch } from "../store/store.js";
import {
  TenantCountRecord,
  DamagedSessionRecord,
  EventRecord,
  eventKey,
  MessageRecord,
  messageKey,
  ReplyRecord,
  SessionRecord,
  TenantSessionRecord,
  tenantSessionKey,
} from "./records.js";
import { deleteRequests } from "./request-ids.js";
import type { RuleBook } from "./rule-book.js";
import type { TenantSessionCount } from "./tenant-session-count.js";

/**
 * Puts the deletion of everything a session stored into `batch`: its events, history, rules,
 * request ids, reply, record and entry in its tenant's list (its tenant's count is the caller's).
 */
export async function deleteSessionRecords(
  store: Store,
  batch: StoreBatch,
  tenant: string,
  sessionId: string,
  rules: RuleBook,
): Promise<void> {
  for await (const key of store.keys(EventRecord, {
    gte: eventKey(sessionId, 0),
    lt: `${sessionId}0`,
  })) {
    batch.del(EventRecord, key);
  }
  for await (const key of store.keys(MessageRecord, {
    gte: messageKey(sessionId, 0),
    lt: `${sessionId}0`,
  })) {
    batch.del(MessageRecord, key);
  }
  await rules.deleteSessionRules(batch, sessionId);
  await deleteRequests(store, batch, sessionId);
  batch
    .del(DamagedSessionRecord, sessionId)
    .del(ReplyRecord, sessionId)
    .del(SessionRecord, sessionId)
    .del(TenantSessionRecord, tenantSessionKey(tenant, sessionId));
}

/** Deletes what a session stored (see `deleteSessionRecords`) and counts it out of its tenant. */
export async function deleteSession(
  store: Store,
  count: TenantSessionCount,
  tenant: string,
  sessionId: string,
  rules: RuleBook,
): Promise<void> {
  const batch = store.batch();
  await deleteSessionRecords(store, batch, tenant, sessionId, rules);
  await count.update(tenant, async (n) => {
    const sessions = Math.max(0, n - 1);
    await batch.put(TenantCountRecord, tenant, { sessions }).write({ sync: true });
    return { count: sessions, result: undefined };
  });
}
