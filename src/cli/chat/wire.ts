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

/** SessionStatus. */
export const SessionStatus = {
  IDLE: 1,
  RUNNING: 2,
  AWAITING_PERMISSION: 3,
  AWAITING_EXTERNAL_RESULT: 4,
} as const;

/** FinishedReason. */
export const FinishedReason = {
  COMPLETED: 1,
  INTERRUPTED: 2,
  EXCEED_MAX_ITERS: 3,
  ERROR: 4,
} as const;

/** ToolResultState. */
export const ToolResultState = {
  SUCCESS: 1,
  ERROR: 2,
  INTERRUPTED: 3,
  DENIED: 4,
  RUNNING: 5,
} as const;

/** PermissionBehavior. */
export const PermissionBehavior = { ALLOW: 1, DENY: 2, ASK: 3 } as const;

/** RuleScope. */
export const RuleScope = { SESSION: 1, AGENT: 2, TENANT: 3 } as const;

/** RuleSource. */
export const RuleSource = { SUGGESTED: 1, CONFIRMATION: 2, API: 3, CONFIG: 4 } as const;

/** PermissionMode by the names `/mode` accepts, as in the server's configuration. */
export const PERMISSION_MODES: Record<string, number> = {
  default: 1,
  accept_edits: 2,
  explore: 3,
  bypass: 4,
  dont_ask: 5,
};

/** The name of a PermissionMode value ("agent's" for UNSPECIFIED). */
export function modeName(mode: number): string {
  return Object.entries(PERMISSION_MODES).find(([, v]) => v === mode)?.[0] ?? "agent's";
}

/** The lower-case name of a SessionStatus value, e.g. "awaiting permission". */
export function statusName(status: number): string {
  const entry = Object.entries(SessionStatus).find(([, v]) => v === status);
  return entry ? entry[0].toLowerCase().replaceAll("_", " ") : "unknown";
}

/** The lower-case name of a RuleScope value; UNSPECIFIED counts as session. */
export function scopeName(scope: number): "session" | "agent" | "tenant" {
  if (scope === RuleScope.AGENT) return "agent";
  if (scope === RuleScope.TENANT) return "tenant";
  return "session";
}

/** The lower-case name of a PermissionBehavior value. */
export function behaviorName(behavior: number): string {
  if (behavior === PermissionBehavior.ALLOW) return "allow";
  if (behavior === PermissionBehavior.DENY) return "deny";
  if (behavior === PermissionBehavior.ASK) return "ask";
  return "unknown";
}

/** The lower-case name of a RuleSource value. */
export function sourceName(source: number): string {
  const entry = Object.entries(RuleSource).find(([, v]) => v === source);
  return entry ? entry[0].toLowerCase() : "unknown";
}
