import { caseOf, clientEvent, type EventStream } from "./event-stream.js";

/** One "ping" (a short text reply) on the monotonic clock (µs): sent, REPLY_START, first delta. */
export interface TimedPing {
  sent: number;
  start: number;
  delta: number;
}

/**
 * Sends "ping" on an attached stream and times REPLY_START and the first TEXT_BLOCK_DELTA at the
 * client; waits for the reply's end.
 */
export async function pingFirstDelta(stream: EventStream, sessionId: string): Promise<TimedPing> {
  const sent = stream.send(
    clientEvent(sessionId, { $case: "userMessage", value: { text: "ping", content: [] } }),
  );
  let start: number | undefined;
  let delta: number | undefined;
  for (;;) {
    const a = await stream.next();
    const kind = caseOf(a.event);
    if (kind === "replyStart") start ??= a.at;
    else if (kind === "textBlockDelta") delta ??= a.at;
    else if (kind === "replyEnd") break;
  }
  if (start === undefined || delta === undefined) {
    throw new Error("the reply ended without REPLY_START or a text delta");
  }
  return { sent, start, delta };
}
