import type { EventBody } from "../agent/events.js";
import type { FinishedReason, Failure, Msg, ToolCallBlock } from "../agent/types.js";
import type { StoreBatch } from "../store/store.js";
import { type ActiveReply, interruptUnfinished } from "./active-reply.js";
import { expiryAudit } from "./audit-entries.js";
import { writeAudit } from "./audit-records.js";
import type { EventHub } from "./event-hub.js";
import { foldEvents } from "./fold-events.js";
import {
  EventRecord,
  MessageRecord,
  messageKey,
  ReplyRecord,
  RequestRecord,
  requestKey,
  type ReplyData,
  RunningRecord,
  type SessionStatus,
} from "./records.js";
import type { AwaitingRequest } from "./reply-outcomes.js";

/** How a reply ends other than by finishing its run: the events that end its calls, and why. */
export interface Ending {
  finishedReason: FinishedReason;
  error?: Failure;
  /** Events that end its unfinished calls, written before its REPLY_END. */
  events: EventBody[];
  /** Records written with its end. */
  records?: (batch: StoreBatch) => void;
}

/** A call a recovery interrupted: its id, its tool, and the state it was in. */
export interface InterruptedCall {
  id: string;
  name: string;
  state: ToolCallBlock["state"];
}

/** A reply that recovery ended, and the calls it was making when the server stopped. */
export interface RecoveredReply {
  data: ReplyData;
  interrupted: InterruptedCall[];
}

/** A parked reply whose calls timed out under the "interrupt" expiry policy. */
export function expiryEnding(
  sessionId: string,
  tenant: string,
  active: ActiveReply,
  due: readonly ToolCallBlock[],
  seconds: number,
): Ending {
  const why = `no answer within ${seconds}s`;
  const audit = expiryAudit(sessionId, active.data.replyId, due, `${why}; interrupted`);
  return {
    finishedReason: "interrupted",
    error: { code: "confirm_timeout", message: why },
    events: interruptUnfinished(
      active,
      `The tool call timed out after ${seconds}s without an answer; the reply was interrupted.`,
    ),
    records: (b) => writeAudit(b, tenant, audit),
  };
}

/**
 * A reply that was running when the server stopped: its message is rebuilt from the last
 * checkpoint and the logged events after it, and every unfinished call gets an INTERRUPTED result
 * (TOOL_RESULT_START unless it was already sent), so a server tool that was running is never run
 * again.
 */
export async function recoveryEnding(
  hub: EventHub,
  active: ActiveReply,
): Promise<Ending & { interrupted: InterruptedCall[] }> {
  const later: EventBody[] = [];
  for await (const event of hub.log.read(active.data.snapshotSeq, hub.lastSeq)) {
    if (event.replyId === active.data.replyId) later.push(event.body);
  }
  active.data.message = foldEvents(active.data.message, later);
  const interrupted = active.data.message.content.flatMap((b) =>
    b.type === "tool_call" && b.state !== "finished"
      ? [{ id: b.id, name: b.name, state: b.state }]
      : [],
  );
  return {
    interrupted,
    finishedReason: "interrupted",
    error: {
      code: "server_restarted",
      message: "the server restarted while the reply was running",
    },
    events: interruptUnfinished(
      active,
      "The tool call was interrupted because the server restarted.",
    ),
  };
}

/**
 * What ending a reply stores with its REPLY_END: its message as history message `index`, the
 * removal of the reply and its running index entry, and the compacted chunks of events.
 */
export function endRecords(
  sessionId: string,
  index: number,
  message: Msg,
  compacted: readonly string[],
): (batch: StoreBatch) => void {
  return (b) => {
    b.put(MessageRecord, messageKey(sessionId, index), message)
      .del(ReplyRecord, sessionId)
      .del(RunningRecord, sessionId);
    for (const key of compacted) b.del(EventRecord, key);
  };
}

/** The waiting notice of a park, stored as the first outcome of the request ids `awaiting`. */
export function parkedRequests(
  sessionId: string,
  awaiting: readonly AwaitingRequest[],
  parked: { notice: Msg; status: SessionStatus },
): (batch: StoreBatch) => void {
  return (b) => {
    for (const { requestId, record } of awaiting) {
      b.put(RequestRecord, requestKey(sessionId, requestId), { ...record, parked });
    }
  };
}
