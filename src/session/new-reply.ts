import type { Msg, ToolCallBlock } from "../agent/types.js";
import { finishWithoutRunning } from "../agent/tool-runner.js";
import type { EventBody } from "../agent/events.js";
import { newId } from "../common/ids.js";
import { isoNow } from "../common/iso-now.js";
import type { StoreBatch } from "../store/store.js";
import {
  MessageRecord,
  messageKey,
  type ReplyData,
  ReplyRecord,
  RunningRecord,
} from "./records.js";

/** The user's message and the reply it starts (running, checkpointed at `lastSeq`). */
export function newReply(
  agentId: string,
  text: string,
  lastSeq: number,
): { user: Msg; reply: ReplyData } {
  const now = isoNow();
  const user: Msg = {
    id: newId("msg"),
    role: "user",
    name: "user",
    content: text === "" ? [] : [{ type: "text", id: newId("blk"), text }],
    createdAt: now,
  };
  const replyId = newId("reply");
  const reply: ReplyData = {
    replyId,
    message: { id: replyId, role: "assistant", name: agentId, content: [], createdAt: now },
    iteration: 0,
    state: "running",
    startedAt: now,
    snapshotSeq: lastSeq,
  };
  return { user, reply };
}

/** The event that starts a reply of the agent named `name`. */
export function replyStart(name: string): EventBody {
  return { type: "reply_start", name, role: "assistant" };
}

/**
 * What starting a reply stores with its REPLY_START: the user's message as history message
 * `index`, the reply, and its entry in the running index.
 */
export function startRecords(
  sessionId: string,
  index: number,
  user: Msg,
  reply: ReplyData,
  /** What else the batch carries (the request id's record). */
  request?: { write(batch: StoreBatch): void },
): (batch: StoreBatch) => void {
  return (b) => {
    b.put(MessageRecord, messageKey(sessionId, index), user);
    b.put(ReplyRecord, sessionId, reply);
    b.put(RunningRecord, sessionId, { replyId: reply.replyId, since: reply.startedAt });
    request?.write(b);
  };
}

/**
 * Finishes the `due` calls of `message` (a copy) DENIED, with a timed-out reason the model sees;
 * the events go to `emit`.
 */
export function denyExpired(
  message: Msg,
  due: readonly ToolCallBlock[],
  seconds: number,
  emit: (body: EventBody) => void,
): void {
  for (const { id } of due) {
    const call = message.content.find(
      (b): b is ToolCallBlock => b.type === "tool_call" && b.id === id,
    );
    if (!call) continue;
    const what = call.state === "asking" ? "confirmation" : "external result";
    message.content.push(
      finishWithoutRunning(
        call,
        "denied",
        `Timed out: no ${what} within ${seconds}s, so the call was not run.`,
        emit,
      ),
    );
  }
}
