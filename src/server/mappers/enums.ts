import type {
  FinishedReason,
  PolicyResult,
  ToolCallState,
  ToolResultState,
} from "../../agent/types.js";
import { AuditKind as PbAuditKind } from "../../generated/parkway/v1/audit.js";
import { SessionStatus as PbSessionStatus } from "../../generated/parkway/v1/agent_service.js";
import {
  FinishedReason as PbFinishedReason,
  ToolCallState as PbToolCallState,
  ToolResultState as PbToolResultState,
} from "../../generated/parkway/v1/content.js";
import {
  PermissionBehavior as PbBehavior,
  PermissionMode as PbMode,
  PolicyResult as PbPolicyResult,
  RuleScope as PbScope,
  RuleSource as PbSource,
} from "../../generated/parkway/v1/permission.js";
import type { AuditKind as AuditKindName } from "../../session/audit-records.js";
import type { SessionStatus } from "../../session/records.js";
import type {
  PermissionBehavior,
  PermissionMode,
  RuleScope,
  RuleSource,
} from "../../permissions/index.js";

/** A two-way mapping between domain strings and proto enum numbers. */
function twoWay<D extends string, P extends number>(table: Record<D, P>) {
  const pairs = Object.entries(table) as [D, P][];
  const toPb = new Map<D, P>(pairs);
  const fromPb = new Map<number, D>(pairs.map(([d, p]) => [p, d]));
  return {
    toPb: (d: D | undefined): P | 0 => (d === undefined ? 0 : (toPb.get(d) ?? 0)),
    fromPb: (p: number): D | undefined => fromPb.get(p),
  };
}

export const finishedReason = twoWay<FinishedReason, PbFinishedReason>({
  completed: PbFinishedReason.FINISHED_REASON_COMPLETED,
  interrupted: PbFinishedReason.FINISHED_REASON_INTERRUPTED,
  exceed_max_iters: PbFinishedReason.FINISHED_REASON_EXCEED_MAX_ITERS,
  error: PbFinishedReason.FINISHED_REASON_ERROR,
});

export const toolResultState = twoWay<ToolResultState, PbToolResultState>({
  success: PbToolResultState.TOOL_RESULT_STATE_SUCCESS,
  error: PbToolResultState.TOOL_RESULT_STATE_ERROR,
  interrupted: PbToolResultState.TOOL_RESULT_STATE_INTERRUPTED,
  denied: PbToolResultState.TOOL_RESULT_STATE_DENIED,
  running: PbToolResultState.TOOL_RESULT_STATE_RUNNING,
});

export const toolCallState = twoWay<ToolCallState, PbToolCallState>({
  pending: PbToolCallState.TOOL_CALL_STATE_PENDING,
  asking: PbToolCallState.TOOL_CALL_STATE_ASKING,
  allowed: PbToolCallState.TOOL_CALL_STATE_ALLOWED,
  submitted: PbToolCallState.TOOL_CALL_STATE_SUBMITTED,
  finished: PbToolCallState.TOOL_CALL_STATE_FINISHED,
});

export const sessionStatus = twoWay<SessionStatus, PbSessionStatus>({
  idle: PbSessionStatus.SESSION_STATUS_IDLE,
  running: PbSessionStatus.SESSION_STATUS_RUNNING,
  awaiting_permission: PbSessionStatus.SESSION_STATUS_AWAITING_PERMISSION,
  awaiting_external_result: PbSessionStatus.SESSION_STATUS_AWAITING_EXTERNAL_RESULT,
});

export const permissionMode = twoWay<PermissionMode, PbMode>({
  default: PbMode.PERMISSION_MODE_DEFAULT,
  accept_edits: PbMode.PERMISSION_MODE_ACCEPT_EDITS,
  explore: PbMode.PERMISSION_MODE_EXPLORE,
  bypass: PbMode.PERMISSION_MODE_BYPASS,
  dont_ask: PbMode.PERMISSION_MODE_DONT_ASK,
});

export const behavior = twoWay<PermissionBehavior, PbBehavior>({
  allow: PbBehavior.PERMISSION_BEHAVIOR_ALLOW,
  deny: PbBehavior.PERMISSION_BEHAVIOR_DENY,
  ask: PbBehavior.PERMISSION_BEHAVIOR_ASK,
});

export const ruleScope = twoWay<RuleScope, PbScope>({
  session: PbScope.RULE_SCOPE_SESSION,
  agent: PbScope.RULE_SCOPE_AGENT,
  tenant: PbScope.RULE_SCOPE_TENANT,
});

export const ruleSource = twoWay<RuleSource, PbSource>({
  suggested: PbSource.RULE_SOURCE_SUGGESTED,
  confirmation: PbSource.RULE_SOURCE_CONFIRMATION,
  api: PbSource.RULE_SOURCE_API,
  config: PbSource.RULE_SOURCE_CONFIG,
});

export const policyResult = twoWay<PolicyResult, PbPolicyResult>({
  allow: PbPolicyResult.POLICY_RESULT_ALLOW,
  ask: PbPolicyResult.POLICY_RESULT_ASK,
  deny: PbPolicyResult.POLICY_RESULT_DENY,
  error: PbPolicyResult.POLICY_RESULT_ERROR,
  timeout: PbPolicyResult.POLICY_RESULT_TIMEOUT,
});

export const auditKind = twoWay<AuditKindName, PbAuditKind>({
  allowed_by_rule: PbAuditKind.AUDIT_KIND_ALLOWED_BY_RULE,
  allowed_by_check: PbAuditKind.AUDIT_KIND_ALLOWED_BY_CHECK,
  denied_by_rule: PbAuditKind.AUDIT_KIND_DENIED_BY_RULE,
  denied_by_check: PbAuditKind.AUDIT_KIND_DENIED_BY_CHECK,
  asked: PbAuditKind.AUDIT_KIND_ASKED,
  confirmed: PbAuditKind.AUDIT_KIND_CONFIRMED,
  denied: PbAuditKind.AUDIT_KIND_DENIED,
  expired: PbAuditKind.AUDIT_KIND_EXPIRED,
  external_result: PbAuditKind.AUDIT_KIND_EXTERNAL_RESULT,
  answered: PbAuditKind.AUDIT_KIND_ANSWERED,
  interrupted: PbAuditKind.AUDIT_KIND_INTERRUPTED,
  rule_added: PbAuditKind.AUDIT_KIND_RULE_ADDED,
  rule_removed: PbAuditKind.AUDIT_KIND_RULE_REMOVED,
  mode_set: PbAuditKind.AUDIT_KIND_MODE_SET,
});
