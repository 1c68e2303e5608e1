import { traceIdOf } from "../common/telemetry.js";

/** The fields that join up the log lines about a session, its reply and the reply's trace. */
export interface SessionLogFields {
  session: string;
  reply?: string;
  /** The reply's trace id (32 hex digits), when the reply is traced. */
  trace_id?: string;
}

/**
 * The fields a log line about session `sessionId` carries: `session`; with `reply` (its id and,
 * when traced, its span's `traceparent`), `reply` and `trace_id`. Made only when a line is logged,
 * so no session or reply holds a child logger.
 */
export function sessionLog(
  sessionId: string,
  reply?: { replyId: string; trace?: string | undefined },
): SessionLogFields {
  const fields: SessionLogFields = { session: sessionId };
  if (reply) fields.reply = reply.replyId;
  const traceId = traceIdOf(reply?.trace);
  if (traceId) fields.trace_id = traceId;
  return fields;
}
