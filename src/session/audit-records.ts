import { isoNow } from "../common/iso-now.js";
import { z } from "zod";
import { policyOutcomeSchema, toolResultStateSchema } from "../agent/types.js";
import { newId } from "../common/ids.js";
import type { StoreBatch } from "../store/store.js";
import { defineRecord } from "../store/record.js";
import { permissionModeSchema } from "../permissions/index.js";

/** What an audit entry records (see AuditKind in proto/parkway/v1/audit.proto). */
export const auditKindSchema = z.enum([
  "allowed_by_rule",
  "allowed_by_check",
  "denied_by_rule",
  "denied_by_check",
  "asked",
  "confirmed",
  "denied",
  "expired",
  "external_result",
  "answered",
  "interrupted",
  "rule_added",
  "rule_removed",
  "mode_set",
]);
export type AuditKind = z.infer<typeof auditKindSchema>;

/** One permission decision or answer: who, when, which call, which rule or check. */
export const auditEntrySchema = z.object({
  /** Time-ordered id (`aud_…`). */
  id: z.string(),
  tenant: z.string(),
  /** ISO time of the decision. */
  at: z.string(),
  kind: auditKindSchema,
  /** The principal's token name, "server" for the engine, "expiry" for a deadline. */
  actor: z.string(),
  sessionId: z.string().optional(),
  replyId: z.string().optional(),
  toolCallId: z.string().optional(),
  toolName: z.string().optional(),
  /** The deciding, added or removed rule, in display form. */
  rule: z.string().optional(),
  ruleId: z.string().optional(),
  check: z.string().optional(),
  reason: z.string().optional(),
  acceptedRules: z.array(z.string()).optional(),
  inputEdited: z.boolean().optional(),
  selected: z.array(z.string()).optional(),
  answeredOther: z.boolean().optional(),
  resultState: toolResultStateSchema.optional(),
  /** On mode_set; unset when the session returned to its agent's mode. */
  mode: permissionModeSchema.optional(),
  scope: z.enum(["session", "agent", "tenant"]).optional(),
  /** On the engine's decisions: the external policy service's answer and latency, when asked. */
  policy: policyOutcomeSchema.optional(),
});
export type AuditEntry = z.infer<typeof auditEntrySchema>;

/** An entry before it is stored: the store assigns id, tenant and (unless given) the time. */
export type AuditDraft = Omit<AuditEntry, "id" | "tenant" | "at"> & { at?: string };

/** A tenant's audit trail: key = `<tenant>/<entry id>`, so a tenant's entries are one range. */
export const AuditRecord = defineRecord({
  kind: "audit",
  version: 1,
  checkOnWrite: false,
  schema: auditEntrySchema,
});
export const auditKey = (tenant: string, id: string) => `${tenant}/${id}`;

/**
 * The same entries by session (a covering index, so a session's trail is one range too):
 * key = `<tenant>/<session id>/<entry id>`.
 */
export const AuditBySessionRecord = defineRecord({
  kind: "audit-session",
  version: 1,
  checkOnWrite: false,
  schema: auditEntrySchema,
});
export const auditSessionKey = (tenant: string, sessionId: string, id: string) =>
  `${tenant}/${sessionId}/${id}`;

/** The id prefix of audit entries; page tokens carry such an id. */
export const AUDIT_ID_PREFIX = "aud";

/**
 * Puts audit entries into a batch, so they commit atomically with the decision or answer they
 * record (and not at all when it is refused). Ids are assigned in order, so entries of one batch
 * list in the order given.
 */
export function writeAudit(batch: StoreBatch, tenant: string, drafts: readonly AuditDraft[]): void {
  for (const draft of drafts) {
    const entry: AuditEntry = {
      ...draft,
      id: newId(AUDIT_ID_PREFIX),
      tenant,
      at: draft.at ?? isoNow(),
    };
    batch.put(AuditRecord, auditKey(tenant, entry.id), entry);
    if (entry.sessionId) {
      batch.put(AuditBySessionRecord, auditSessionKey(tenant, entry.sessionId, entry.id), entry);
    }
  }
}
