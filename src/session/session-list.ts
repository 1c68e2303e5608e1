import type { Store } from "../store/store.js";
import { pageTokens } from "./page-token.js";
import { type SessionStatus, TenantSessionRecord, tenantSessionKey } from "./records.js";
import type { SessionView } from "./session-view.js";

/** Which sessions a list shows, and which page. */
export interface SessionFilter {
  status?: SessionStatus;
  agentId?: string;
  pageSize: number;
  /** The opaque token of the previous page (see `encodeSessionPageToken`). */
  pageToken?: string;
}

/** One page of sessions, and the token of the next page when there is one. */
export interface SessionPage {
  sessions: SessionView[];
  nextPageToken?: string;
}

const tokens = pageTokens("s1", /^ses_[0-9a-z]{22}$/, "ListSessions");

/** The token of a page that ended at session `id`: opaque to clients, checked when it comes back. */
export const encodeSessionPageToken = tokens.encode;

/**
 * A tenant's sessions newest first, filtered by status and agent, `pageSize` at a time; `view`
 * reads each one (a session that cannot be read is left out). A page token that ListSessions did
 * not return is INVALID_ARGUMENT naming page_token.
 */
export async function listSessions(
  store: Store,
  tenant: string,
  filter: SessionFilter,
  view: (sessionId: string) => Promise<SessionView>,
): Promise<SessionPage> {
  const before = filter.pageToken ? tokens.decode(filter.pageToken) : undefined;
  const sessions: SessionView[] = [];
  for await (const [, { sessionId: id }] of store.entries(TenantSessionRecord, {
    reverse: true,
    gte: tenantSessionKey(tenant, ""),
    lt: before ? tenantSessionKey(tenant, before) : `${tenant}/\uffff`,
  })) {
    const found = await view(id).catch(() => undefined);
    if (!found) continue;
    if (filter.status && found.status !== filter.status) continue;
    if (filter.agentId && found.agentId !== filter.agentId) continue;
    if (sessions.length === filter.pageSize) {
      return { sessions, nextPageToken: encodeSessionPageToken(sessions.at(-1)!.id) };
    }
    sessions.push(found);
  }
  return { sessions };
}
