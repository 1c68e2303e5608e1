import { invalidArgument } from "../common/errors.js";
import type { AuditRecord as PbAuditRecord } from "../generated/parkway/v1/audit.js";
import type { AuditFilter } from "../session/audit-log.js";
import type { AuditEntry } from "../session/audit-records.js";
import type { AuditServiceHandlers } from "./audit-service.js";
import { policyToPb } from "./mappers/content.js";
import { auditKind, permissionMode, ruleScope, toolResultState } from "./mappers/enums.js";

/** Reads a tenant's audit trail (the session layer's `listAudit` over the server's store). */
export type ListAudit = (
  tenant: string,
  filter: AuditFilter,
  signal: AbortSignal,
) => Promise<{ entries: AuditEntry[]; nextPageToken?: string }>;

/** The largest page ListAuditRecords returns. */
export const MAX_AUDIT_PAGE = 1000;
const DEFAULT_AUDIT_PAGE = 100;

function auditToPb(entry: AuditEntry): PbAuditRecord {
  return {
    id: entry.id,
    time: new Date(entry.at),
    kind: auditKind.toPb(entry.kind),
    actor: entry.actor,
    sessionId: entry.sessionId ?? "",
    replyId: entry.replyId ?? "",
    toolCallId: entry.toolCallId ?? "",
    toolName: entry.toolName ?? "",
    rule: entry.rule ?? "",
    ruleId: entry.ruleId ?? "",
    check: entry.check ?? "",
    reason: entry.reason ?? "",
    acceptedRules: entry.acceptedRules ?? [],
    inputEdited: entry.inputEdited ?? false,
    selected: entry.selected ?? [],
    answeredOther: entry.answeredOther ?? false,
    resultState: toolResultState.toPb(entry.resultState),
    mode: permissionMode.toPb(entry.mode),
    scope: ruleScope.toPb(entry.scope),
    policy: entry.policy ? policyToPb(entry.policy) : undefined,
  };
}

/** AuditService: the caller's tenant's audit trail, oldest first, paged. */
export function createAuditService(list: ListAudit): AuditServiceHandlers {
  return {
    async listAuditRecords(request, ctx) {
      if (request.pageSize > MAX_AUDIT_PAGE) {
        throw invalidArgument([
          { field: "page_size", description: `must be at most ${MAX_AUDIT_PAGE}` },
        ]);
      }
      const page = await list(
        ctx.principal.tenant,
        {
          ...(request.sessionId ? { sessionId: request.sessionId } : {}),
          ...(request.toolCallId ? { toolCallId: request.toolCallId } : {}),
          pageSize: request.pageSize || DEFAULT_AUDIT_PAGE,
          ...(request.pageToken ? { pageToken: request.pageToken } : {}),
        },
        ctx.signal,
      );
      return { records: page.entries.map(auditToPb), nextPageToken: page.nextPageToken ?? "" };
    },
  };
}
