import {
  AuditKind,
  Code,
  ConnectError,
  FinishedReason,
  PermissionBehavior,
  PermissionMode,
  type PermissionRule,
  RuleScope,
  RuleSource,
  SessionStatus,
  type Timestamp,
  ToolResultState,
  type Usage,
} from "./parkway.js";

/** A rule in its display form, e.g. Bash(npm test:*). */
export function ruleText(rule: PermissionRule): string {
  return rule.ruleContent === undefined ? rule.toolName : `${rule.toolName}(${rule.ruleContent})`;
}

/** An enum value's name in lower case words, e.g. AWAITING_PERMISSION → "awaiting permission". */
function words(names: Record<number, string>, value: number): string {
  return (names[value] ?? String(value)).toLowerCase().replaceAll("_", " ");
}

export const statusText = (s: SessionStatus) => words(SessionStatus, s);
export const behaviorText = (b: PermissionBehavior) => words(PermissionBehavior, b);
export const scopeText = (s: RuleScope) => words(RuleScope, s);
export const sourceText = (s: RuleSource) => words(RuleSource, s);
export const modeText = (m: PermissionMode) => words(PermissionMode, m);
export const auditKindText = (k: AuditKind) => words(AuditKind, k);
export const resultStateText = (s: ToolResultState) => words(ToolResultState, s);
export const finishedText = (f: FinishedReason) => words(FinishedReason, f);

/** A timestamp as local date and time; "" when unset. */
export function timeText(ts: Timestamp | undefined): string {
  if (!ts) return "";
  const ms = Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6);
  return new Date(ms).toLocaleString();
}

/** Token counts for people. */
export function usageText(usage: Usage | undefined): string {
  if (!usage) return "";
  let text = `${usage.inputTokens} in · ${usage.outputTokens} out`;
  if (usage.cacheReadTokens) text += ` · ${usage.cacheReadTokens} cached`;
  return `${text} tokens`;
}

/** A JSON text indented for reading; the text itself when it is not JSON. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * Whether `err` says the server was not reached or its answer was lost (the browser's fetch failed,
 * or the connection broke): not a refusal, so the same request may be sent again.
 */
export function unreachable(err: unknown): boolean {
  const error = ConnectError.from(err);
  return (
    error.code === Code.Unavailable ||
    (error.code === Code.Unknown && err instanceof TypeError) ||
    (error.code === Code.Unknown && error.cause instanceof TypeError)
  );
}

/** What went wrong, for people: the server's message and its code. */
export function errorText(err: unknown): string {
  if (unreachable(err) && ConnectError.from(err).code === Code.Unknown) {
    return "the server could not be reached (unavailable)";
  }
  const error = ConnectError.from(err);
  const code = Code[error.code] ?? String(error.code);
  return `${error.rawMessage} (${code.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase()})`;
}
