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
  const events = await stream.until((e) => caseOf(e) === "replyEnd");
  const start = events.find((a) => caseOf(a.event) === "replyStart");
  const delta = events.find((a) => caseOf(a.event) === "textBlockDelta");
  if (!start || !delta) throw new Error("the reply ended without REPLY_START or a text delta");
  return { sent, start: start.at, delta: delta.at };
}
