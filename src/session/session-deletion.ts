import { isParkwayError, notFound } from "../common/errors.js";
import type { Store, StoreBatch } from "../store/store.js";
import type { ActorRegistry } from "./actor-registry.js";
import {
  TenantCountRecord,
  DamagedSessionRecord,
  EventRecord,
  eventKey,
  MessageRecord,
  ParkedRecord,
  messageKey,
  ReplyRecord,
  SessionRecord,
  TenantSessionRecord,
  tenantSessionKey,
} from "./records.js";
import { deleteRequests } from "./request-ids.js";
import type { RuleBook } from "./rule-book.js";
import type { TenantSessionCount } from "./tenant-session-count.js";
import type { StoredEvent } from "./stored-event.js";

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
    .del(ParkedRecord, sessionId)
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
  await count.update(tenant, async (n, guard) => {
    const batch = store.batch();
    await deleteSessionRecords(store, batch, tenant, sessionId, rules);
    const sessions = Math.max(0, n - 1);
    guard(batch);
    await batch.put(TenantCountRecord, tenant, { sessions }).write({ sync: true });
    return { count: sessions, result: undefined };
  });
}

/**
 * Deletes a session with its history, events and reply: a running reply is interrupted and the
 * streams attached to the actor end with NOT_FOUND (those following it from other nodes read that
 * it is gone once signalled). A session that lost data can still be deleted.
 */
export async function removeSession(
  deps: {
    store: Store;
    actors: ActorRegistry;
    sessionCount: TenantSessionCount;
    rules: RuleBook;
    /** Tells the streams following the session (several nodes). */
    published?: ((sessionId: string, events: readonly StoredEvent[]) => void) | undefined;
  },
  tenant: string,
  sessionId: string,
): Promise<void> {
  const { store, actors } = deps;
  const actor = await actors.acquire(sessionId, tenant).catch(async (err: unknown) => {
    if (!isParkwayError(err, "data_loss")) throw err;
    const data = await store.get(SessionRecord, sessionId).catch(() => undefined);
    if (data && data.tenant !== tenant) throw notFound("session", sessionId);
    return undefined;
  });
  // After the inputs before it (an answer applied first is written first, not over the deletion);
  // the ones after it are refused.
  const gone = notFound("session", sessionId);
  await actor?.serial(() => actor.dispose(gone)).catch(() => actor.dispose(gone));
  actors.forget(sessionId, actor);
  await deleteSession(store, deps.sessionCount, tenant, sessionId, deps.rules);
  deps.published?.(sessionId, []);
  deps.rules.changed();
}
