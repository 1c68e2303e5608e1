import { isoNow } from "../common/iso-now.js";
import type { RuleScope } from "../permissions/index.js";
import type { DecisionInfo, Msg, Rule, ToolCallBlock, ToolResultBlock } from "../agent/types.js";
import { formatRule } from "../permissions/index.js";
import { answersIn } from "../tools/answer-entry.js";
import type { AuditDraft, AuditKind } from "./audit-records.js";
import type { ConfirmAnswer, ExternalAnswer } from "./reply-inputs.js";
import type { SessionData } from "./records.js";

/**
 * Builders of audit drafts from the session layer's facts: the engine's own decisions, people's
 * answers, expiries, interrupts and permission administration. Pure: the caller writes the drafts
 * (`writeAudit`) in the batch that commits what they record.
 */

/** Who the engine's own decisions are attributed to. */
export const SERVER_ACTOR = "server";
/** Who an expiry is attributed to. */
export const EXPIRY_ACTOR = "expiry";

const callOf = (message: Msg, id: string): ToolCallBlock | undefined =>
  message.content.find((b): b is ToolCallBlock => b.type === "tool_call" && b.id === id);

const resultOf = (message: Msg, id: string): ToolResultBlock | undefined =>
  message.content.findLast((b): b is ToolResultBlock => b.type === "tool_result" && b.id === id);

const callFields = (sessionId: string, replyId: string, call: { id: string; name: string }) => ({
  sessionId,
  replyId,
  toolCallId: call.id,
  toolName: call.name,
});

/** The engine's decision on a call: allowed or denied by a rule or a check, or asked. */
export function decisionAudit(
  sessionId: string,
  replyId: string,
  call: ToolCallBlock,
  decision: DecisionInfo,
): AuditDraft {
  const byRule = decision.rule !== undefined;
  const kind: AuditKind =
    decision.behavior === "ask"
      ? "asked"
      : `${decision.behavior === "allow" ? "allowed" : "denied"}_by_${byRule ? "rule" : "check"}`;
  return {
    at: isoNow(),
    kind,
    actor: SERVER_ACTOR,
    ...callFields(sessionId, replyId, call),
    ...(decision.rule ? { rule: formatRule(decision.rule) } : {}),
    ...(decision.rule?.id ? { ruleId: decision.rule.id } : {}),
    check: decision.check,
    reason: decision.reason,
    ...(decision.policy ? { policy: decision.policy } : {}),
  };
}

/**
 * People's confirmations and denials, read against the reply before they were applied (`before`):
 * each says whether the input was edited and which rules were accepted with it.
 */
export function confirmAudit(
  sessionId: string,
  before: Msg,
  answers: readonly ConfirmAnswer[],
  principal: string,
): AuditDraft[] {
  return answers.map((answer) => {
    const call = callOf(before, answer.toolCallId) ?? { id: answer.toolCallId, name: "" };
    const base = { actor: principal, ...callFields(sessionId, before.id, call) };
    if (!answer.confirmed) {
      return { ...base, kind: "denied", ...(answer.reason ? { reason: answer.reason } : {}) };
    }
    const edited =
      answer.editedInput !== undefined && "input" in call && answer.editedInput !== call.input;
    return {
      ...base,
      kind: "confirmed",
      acceptedRules: answer.rules.map((r: Rule) => formatRule(r)),
      inputEdited: edited,
    };
  });
}

/**
 * Submitted external results, read from the reply after they were applied (`after`, where each
 * result has been checked): an AskUser result is an answer with the selected labels.
 */
export function externalAudit(
  sessionId: string,
  after: Msg,
  answers: readonly ExternalAnswer[],
  principal: string,
): AuditDraft[] {
  return answers.map((answer) => {
    const call = callOf(after, answer.toolCallId) ?? { id: answer.toolCallId, name: "" };
    const result = resultOf(after, answer.toolCallId);
    const base = {
      actor: principal,
      ...callFields(sessionId, after.id, call),
      resultState: result?.state ?? answer.result.state,
    };
    if (call.name !== "AskUser") return { ...base, kind: "external_result" };
    const answers = answersIn(result?.metadata) ?? [];
    return {
      ...base,
      kind: "answered",
      selected: answers.flatMap((a) => a.selected ?? []),
      answeredOther: answers.some((a) => a.other !== undefined && a.other !== ""),
    };
  });
}

/** Calls that expired without an answer; `reason` says what happened to them. */
export function expiryAudit(
  sessionId: string,
  replyId: string,
  calls: readonly ToolCallBlock[],
  reason: string,
): AuditDraft[] {
  return calls.map((call) => ({
    kind: "expired",
    actor: EXPIRY_ACTOR,
    ...callFields(sessionId, replyId, call),
    reason,
  }));
}

/** A reply interrupted by a person. */
export function interruptAudit(sessionId: string, replyId: string, principal: string): AuditDraft {
  return { kind: "interrupted", actor: principal, sessionId, replyId };
}

/** A rule added or removed through PermissionService. */
export function ruleAudit(
  kind: "rule_added" | "rule_removed",
  rule: Rule & { id: string; scope: RuleScope },
  principal: string,
): AuditDraft {
  return {
    kind,
    actor: principal,
    toolName: rule.toolName,
    rule: formatRule(rule),
    ruleId: rule.id,
    scope: rule.scope,
    ...(rule.scope === "session" && rule.sessionId ? { sessionId: rule.sessionId } : {}),
  };
}

/** A session's mode set through PermissionService (unset: back to the agent's mode). */
export function modeAudit(
  sessionId: string,
  mode: SessionData["mode"],
  principal: string,
): AuditDraft {
  return { kind: "mode_set", actor: principal, sessionId, ...(mode ? { mode } : {}) };
}
