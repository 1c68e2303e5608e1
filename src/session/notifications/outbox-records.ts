import { z } from "zod";
import { NOTIFICATION_EVENTS } from "../../config/notification-schema.js";
import { defineRecord } from "../../store/record.js";

const delivery = {
  /** The delivery id (`Parkway-Delivery`): the same on every attempt, for receivers to dedupe. */
  id: z.string(),
  event: z.enum(NOTIFICATION_EVENTS),
  url: z.string(),
  /** Whose target it is: the agent's or the tenant's (its secret and retry policy are read there). */
  owner: z.object({ kind: z.enum(["agent", "tenant"]), id: z.string() }),
  tenant: z.string(),
  sessionId: z.string(),
  replyId: z.string(),
  /**
   * The JSON body, as written with the park (a parked reply's calls are re-checked, and its answer
   * links added, when sent).
   */
  body: z.string(),
  /** Attempts made so far. */
  attempts: z.number().int().nonnegative(),
  createdAt: z.string(),
  /** Why the last attempt failed. */
  lastError: z.string().optional(),
};

/**
 * A notification to deliver: key = `<due time, ISO>/<delivery id>`, so the earliest due sorts
 * first. Written in the same write as the park (or expiry, or end) it tells of; moved to a later
 * key while an attempt is under way (a claim, so that one node sends it) and after a failure.
 */
export const OutboxRecord = defineRecord({
  kind: "outbox",
  version: 1,
  schema: z.object(delivery),
});
export type OutboxEntry = z.infer<typeof OutboxRecord.schema>;
export const outboxKey = (dueAt: string, id: string) => `${dueAt}/${id}`;

/** A notification given up after its last attempt: key = `<tenant>/<delivery id>` (time-sortable). */
export const DeadLetterRecord = defineRecord({
  kind: "dead_letter",
  version: 1,
  schema: z.object({ ...delivery, deadAt: z.string() }),
});
export type DeadLetter = z.infer<typeof DeadLetterRecord.schema>;
export const deadLetterKey = (tenant: string, id: string) => `${tenant}/${id}`;
