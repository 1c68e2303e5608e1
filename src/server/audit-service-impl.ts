import { invalidArgument } from "../common/errors.js";
import type { AuditRecord as PbAuditRecord } from "../generated/parkway/v1/audit.js";
import type { AuditFilter } from "../session/audit-log.js";
import type { AuditEntry } from "../session/audit-records.js";
import type { DeadLetter } from "../session/notifications/outbox-records.js";
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

/** Reads a tenant's dead letters (the session layer's `listDeadLetters` over the server's store). */
export type ListDeadLetters = (
  tenant: string,
  page: { pageSize: number; pageToken?: string },
  signal: AbortSignal,
) => Promise<{ deadLetters: DeadLetter[]; nextPageToken?: string }>;

function pageSize(requested: number): number {
  if (requested > MAX_AUDIT_PAGE) {
    throw invalidArgument([
      { field: "page_size", description: `must be at most ${MAX_AUDIT_PAGE}` },
    ]);
  }
  return requested || DEFAULT_AUDIT_PAGE;
}

/** AuditService: the caller's tenant's audit trail and dead letters, oldest first, paged. */
export function createAuditService(
  list: ListAudit,
  deadLetters: ListDeadLetters,
): AuditServiceHandlers {
  return {
    async listDeadLetters(request, ctx) {
      const page = await deadLetters(
        ctx.principal.tenant,
        {
          pageSize: pageSize(request.pageSize),
          ...(request.pageToken ? { pageToken: request.pageToken } : {}),
        },
        ctx.signal,
      );
      return {
        deadLetters: page.deadLetters.map((d) => ({
          id: d.id,
          event: d.event,
          url: d.url,
          sessionId: d.sessionId,
          replyId: d.replyId,
          attempts: d.attempts,
          lastError: d.lastError ?? "",
          createdAt: new Date(d.createdAt),
          deadAt: new Date(d.deadAt),
          body: d.body,
        })),
        nextPageToken: page.nextPageToken ?? "",
      };
    },
    async listAuditRecords(request, ctx) {
      const page = await list(
        ctx.principal.tenant,
        {
          ...(request.sessionId ? { sessionId: request.sessionId } : {}),
          ...(request.toolCallId ? { toolCallId: request.toolCallId } : {}),
          pageSize: pageSize(request.pageSize),
          ...(request.pageToken ? { pageToken: request.pageToken } : {}),
        },
        ctx.signal,
      );
      return { records: page.entries.map(auditToPb), nextPageToken: page.nextPageToken ?? "" };
    },
  };
}
