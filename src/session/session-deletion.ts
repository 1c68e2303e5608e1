import type { Store, StoreBatch } from "../store/store.js";
import {
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
