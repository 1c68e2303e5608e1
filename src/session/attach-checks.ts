import { invalidArgument, ParkwayError } from "../common/errors.js";
import { limitReached } from "../common/limits.js";
import type { SessionActor } from "./session-actor.js";

/**
 * Refuses an attach after `afterSeq` that the session cannot serve: events that retention
 * compacted (FAILED_PRECONDITION EVENTS_COMPACTED with the first seq still stored), a seq beyond
 * the session's last (INVALID_ARGUMENT), or one stream more than `maxStreams`.
 */
export function checkAttach(
  actor: SessionActor,
  afterSeq: number,
  maxStreams: number | undefined,
): void {
  const sessionId = actor.id;
  const first = actor.firstAvailableSeq;
  if (afterSeq + 1 < first) {
    throw new ParkwayError(
      "failed_precondition",
      `events up to seq ${first - 1} of session ${sessionId} were compacted (their replies are kept as final messages); attach with after_seq ≥ ${first - 1}`,
      {
        reason: "EVENTS_COMPACTED",
        metadata: { first_available_seq: String(first) },
        preconditionViolations: [
          {
            type: "EVENT_RETENTION",
            subject: sessionId,
            description: `the first event still stored is seq ${first}`,
          },
        ],
      },
    );
  }
  const lastSeq = actor.snapshot.lastSeq;
  if (afterSeq > lastSeq) {
    throw invalidArgument([
      {
        field: "attach.after_seq",
        description: `is ${afterSeq}, beyond the session's last seq ${lastSeq}`,
      },
    ]);
  }
  if (maxStreams !== undefined && actor.events.attached >= maxStreams) {
    throw limitReached(
      "streamsPerSession",
      maxStreams,
      `session ${sessionId} has ${maxStreams} streams attached`,
    );
  }
}
