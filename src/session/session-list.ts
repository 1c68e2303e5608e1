import type { Store } from "../store/store.js";
import { type SessionStatus, TenantSessionRecord, tenantSessionKey } from "./records.js";
import type { SessionView } from "./session-view.js";

/** Which sessions a list shows, and which page. */
export interface SessionFilter {
  status?: SessionStatus;
  agentId?: string;
  pageSize: number;
  /** The last session id of the previous page. */
  pageToken?: string;
}

/** One page of sessions, and the token of the next page when there is one. */
export interface SessionPage {
  sessions: SessionView[];
  nextPageToken?: string;
}

/**
 * A tenant's sessions newest first, filtered by status and agent, `pageSize` at a time; `view`
 * reads each one (a session that cannot be read is left out).
 */
export async function listSessions(
  store: Store,
  tenant: string,
  filter: SessionFilter,
  view: (sessionId: string) => Promise<SessionView>,
): Promise<SessionPage> {
  const sessions: SessionView[] = [];
  let last: string | undefined;
  for await (const [, { sessionId: id }] of store.entries(TenantSessionRecord, {
    reverse: true,
    gte: tenantSessionKey(tenant, ""),
    lt: filter.pageToken ? tenantSessionKey(tenant, filter.pageToken) : `${tenant}/\uffff`,
  })) {
    const found = await view(id).catch(() => undefined);
    if (!found) continue;
    if (filter.status && found.status !== filter.status) continue;
    if (filter.agentId && found.agentId !== filter.agentId) continue;
    if (sessions.length === filter.pageSize) return { sessions, nextPageToken: last };
    sessions.push(found);
    last = id;
  }
  return { sessions };
}
