import { limitReached } from "../common/limits.js";
import { MAX_RULES_PER_SCOPE } from "../permissions/index.js";

/** Where a rule applies. */
export type RuleScopeKey =
  | { scope: "session"; sessionId: string }
  | { scope: "agent"; agentId: string }
  | { scope: "tenant" };

/** A scope's part of its rules' store keys: `session:ID`, `agent:ID` or `tenant`. */
export function scopeKey(key: RuleScopeKey): string {
  switch (key.scope) {
    case "session":
      return `session:${key.sessionId}`;
    case "agent":
      return `agent:${key.agentId}`;
    case "tenant":
      return "tenant";
  }
}

/** A rule's store key. */
export const recordKey = (tenant: string, scope: string, id: string) => `${tenant}/${scope}/${id}`;

/** RESOURCE_EXHAUSTED: the scope holds MAX_RULES_PER_SCOPE rules already. */
export function scopeFull(key: RuleScopeKey) {
  const where =
    key.scope === "session"
      ? `session ${key.sessionId}`
      : key.scope === "agent"
        ? `agent ${key.agentId}`
        : "the tenant";
  return limitReached(
    "rulesPerScope",
    MAX_RULES_PER_SCOPE,
    `${where} has ${MAX_RULES_PER_SCOPE} rules of its own, the most a scope holds; remove some first`,
  );
}
