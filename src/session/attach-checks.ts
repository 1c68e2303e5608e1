import { invalidArgument, ParkwayError } from "../common/errors.js";
import { limitReached } from "../common/limits.js";

/** What an attach is checked against: the session as stored or in memory. */
export interface AttachTarget {
  id: string;
  /** The first seq still stored (retention compacts older events). */
  firstAvailableSeq: number;
  lastSeq: number;
  /** Streams attached to the session (on this node). */
  attached: number;
}

/**
 * Refuses an attach after `afterSeq` that the session cannot serve: events that retention
 * compacted (FAILED_PRECONDITION EVENTS_COMPACTED with the first seq still stored), a seq beyond
 * the session's last (INVALID_ARGUMENT naming `afterSeqField`, the request's field: Chat's
 * `attach.after_seq`, Watch's `after_seq`), or one stream more than `maxStreams`.
 */
export function checkAttach(
  target: AttachTarget,
  afterSeq: number,
  maxStreams: number | undefined,
  afterSeqField: string,
): void {
  const sessionId = target.id;
  const first = target.firstAvailableSeq;
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
  const lastSeq = target.lastSeq;
  if (afterSeq > lastSeq) {
    throw invalidArgument([
      {
        field: afterSeqField,
        description: `is ${afterSeq}, beyond the session's last seq ${lastSeq}`,
      },
    ]);
  }
  if (maxStreams !== undefined && target.attached >= maxStreams) {
    throw limitReached(
      "streamsPerSession",
      maxStreams,
      `session ${sessionId} has ${maxStreams} streams attached`,
    );
  }
}
