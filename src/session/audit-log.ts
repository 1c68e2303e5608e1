import type { Store } from "../store/store.js";
import { pageTokens } from "./page-token.js";
import {
  AUDIT_ID_PREFIX,
  AuditBySessionRecord,
  type AuditEntry,
  AuditRecord,
  auditKey,
  auditSessionKey,
} from "./audit-records.js";

/** What ListAuditRecords asks for. */
export interface AuditFilter {
  sessionId?: string;
  toolCallId?: string;
  pageSize: number;
  /** The opaque token of the previous page. */
  pageToken?: string;
}

const tokens = pageTokens(
  "a1",
  new RegExp(`^${AUDIT_ID_PREFIX}_[0-9a-z]{22}$`),
  "ListAuditRecords",
);

/** The token of a page that ended at `id`: opaque to clients, checked when it comes back. */
export const encodePageToken = tokens.encode;

/** The entry id a page token continues after; INVALID_ARGUMENT naming page_token when malformed. */
export const decodePageToken = tokens.decode;

/**
 * A tenant's audit entries, oldest first, one page at a time. Reads one key range: the tenant's
 * trail, or with `sessionId` the session's (the covering index); `toolCallId` filters within it.
 * `nextPageToken` is set only when another matching entry exists after the page.
 */
export async function listAudit(
  store: Store,
  tenant: string,
  filter: AuditFilter,
  signal?: AbortSignal,
): Promise<{ entries: AuditEntry[]; nextPageToken?: string }> {
  const after = filter.pageToken ? decodePageToken(filter.pageToken) : undefined;
  const prefix = filter.sessionId
    ? auditSessionKey(tenant, filter.sessionId, "")
    : auditKey(tenant, "");
  const type = filter.sessionId ? AuditBySessionRecord : AuditRecord;
  const entries: AuditEntry[] = [];
  for await (const [, entry] of store.entries(type, {
    ...(after ? { gt: prefix + after } : { gte: prefix }),
    lt: `${prefix}\uffff`,
    ...(signal ? { signal } : {}),
  })) {
    if (filter.toolCallId && entry.toolCallId !== filter.toolCallId) continue;
    if (entries.length === filter.pageSize) {
      return { entries, nextPageToken: encodePageToken(entries[entries.length - 1]!.id) };
    }
    entries.push(entry);
  }
  return { entries };
}
