import type { ParkwayClient, ParkwaySession } from "../../client/index.js";

/**
 * The wire types the chat works with, taken from the public client's signatures, and the proto
 * enum values it reads (their numbers are fixed by `proto/parkway/v1/`).
 */

export type ServerEvent = NonNullable<Awaited<ReturnType<ParkwaySession["next"]>>>;
export type EventBody = NonNullable<ServerEvent["event"]>;
export type ToolCallBlock = Parameters<ParkwaySession["confirm"]>[0];
export type Session = Awaited<ReturnType<ParkwayClient["getSession"]>>;
export type Agent = Awaited<ReturnType<ParkwayClient["listAgents"]>>[number];
export type PermissionRule = Awaited<ReturnType<ParkwayClient["listRules"]>>[number];
export type PermissionMode = Parameters<ParkwayClient["setMode"]>[1];
export type AskUserInput = NonNullable<ToolCallBlock["askUser"]>;
export type AskUserQuestion = AskUserInput["questions"][number];

type Body<K extends EventBody["$case"]> = Extract<EventBody, { $case: K }>["value"];
type SessionStatusValue = Session["status"];
type FinishedReasonValue = Body<"replyEnd">["finishedReason"];
export type ToolResultStateValue = Body<"toolResultEnd">["state"];
type BehaviorValue = PermissionRule["behavior"];
type ScopeValue = PermissionRule["scope"];
type SourceValue = PermissionRule["source"];

/** SessionStatus. */
export const SessionStatus = {
  IDLE: 1 as SessionStatusValue,
  RUNNING: 2 as SessionStatusValue,
  AWAITING_PERMISSION: 3 as SessionStatusValue,
  AWAITING_EXTERNAL_RESULT: 4 as SessionStatusValue,
};

/** FinishedReason. */
export const FinishedReason = {
  COMPLETED: 1 as FinishedReasonValue,
  INTERRUPTED: 2 as FinishedReasonValue,
  EXCEED_MAX_ITERS: 3 as FinishedReasonValue,
  ERROR: 4 as FinishedReasonValue,
};

/** ToolResultState. */
export const ToolResultState = {
  SUCCESS: 1 as ToolResultStateValue,
  ERROR: 2 as ToolResultStateValue,
  INTERRUPTED: 3 as ToolResultStateValue,
  DENIED: 4 as ToolResultStateValue,
  RUNNING: 5 as ToolResultStateValue,
};

/** ToolCallState (the states a pending call can be in). */
export const ToolCallState = {
  ASKING: 2 as ToolCallBlock["state"],
  SUBMITTED: 4 as ToolCallBlock["state"],
};

/** PermissionBehavior. */
export const PermissionBehavior = {
  ALLOW: 1 as BehaviorValue,
  DENY: 2 as BehaviorValue,
  ASK: 3 as BehaviorValue,
};

/** RuleScope. */
export const RuleScope = {
  SESSION: 1 as ScopeValue,
  AGENT: 2 as ScopeValue,
  TENANT: 3 as ScopeValue,
};

/** RuleSource. */
export const RuleSource = {
  SUGGESTED: 1 as SourceValue,
  CONFIRMATION: 2 as SourceValue,
  API: 3 as SourceValue,
  CONFIG: 4 as SourceValue,
};

/** PermissionMode by the names `/mode` accepts, as in the server's configuration. */
export const PERMISSION_MODES: Record<string, PermissionMode> = {
  default: 1,
  accept_edits: 2,
  explore: 3,
  bypass: 4,
  dont_ask: 5,
};

/** The name of a PermissionMode value ("agent's" for UNSPECIFIED). */
export function modeName(mode: PermissionMode): string {
  return Object.entries(PERMISSION_MODES).find(([, v]) => v === mode)?.[0] ?? "agent's";
}

/** The lower-case name of a SessionStatus value, e.g. "awaiting permission". */
export function statusName(status: SessionStatusValue): string {
  const entry = Object.entries(SessionStatus).find(([, v]) => v === status);
  return entry ? entry[0].toLowerCase().replaceAll("_", " ") : "unknown";
}

/** The lower-case name of a RuleScope value; UNSPECIFIED counts as session. */
export function scopeName(scope: ScopeValue): "session" | "agent" | "tenant" {
  if (scope === RuleScope.AGENT) return "agent";
  if (scope === RuleScope.TENANT) return "tenant";
  return "session";
}

/** The lower-case name of a PermissionBehavior value. */
export function behaviorName(behavior: BehaviorValue): string {
  if (behavior === PermissionBehavior.ALLOW) return "allow";
  if (behavior === PermissionBehavior.DENY) return "deny";
  if (behavior === PermissionBehavior.ASK) return "ask";
  return "unknown";
}

/** The lower-case name of a RuleSource value. */
export function sourceName(source: SourceValue): string {
  const entry = Object.entries(RuleSource).find(([, v]) => v === source);
  return entry ? entry[0].toLowerCase() : "unknown";
}
