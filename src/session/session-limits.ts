import { limitReached } from "../common/limits.js";

/** Limits the sessions enforce; each is RESOURCE_EXHAUSTED naming it when reached. */
export interface SessionLimits {
  sessionsPerTenant?: number;
  runningReplies?: number;
  streamsPerSession?: number;
  /** Unread events one attached stream may fall behind before it ends with RESOURCE_EXHAUSTED. */
  streamBacklogEvents?: number;
}

/** Refuses one session more for a tenant that has `count` when the limit is reached. */
export function checkSessionsPerTenant(limits: SessionLimits, tenant: string, count: number): void {
  const max = limits.sessionsPerTenant;
  if (max !== undefined && count >= max) {
    throw limitReached(
      "sessionsPerTenant",
      max,
      `tenant ${tenant} has ${max} sessions; delete some`,
    );
  }
}
