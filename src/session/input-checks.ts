import type { ToolCallBlock } from "../agent/types.js";
import { failedPrecondition } from "../common/errors.js";
import { pendingCalls } from "./pending-calls.js";
import type { ReplyData, SessionStatus } from "./records.js";

/** The part of an active reply the checks look at. */
interface Active {
  data: ReplyData;
  task?: Promise<void>;
}

/** Refuses a reply id that is not the session's current reply. */
export function assertReply(current: string, replyId: string): void {
  if (replyId && replyId !== current) {
    throw failedPrecondition(`reply ${replyId} is not the session's current reply`, [
      { type: "REPLY", subject: replyId, description: `the current reply is ${current}` },
    ]);
  }
}

/** Refuses a new user message while a reply is running or parked, naming what is pending. */
export function assertIdle(sessionId: string, active: Active | undefined, disposed: boolean): void {
  if (disposed) throw failedPrecondition("the session is being deleted");
  if (!active) return;
  if (active.task) {
    throw failedPrecondition(`reply ${active.data.replyId} is still running; interrupt it first`, [
      { type: "SESSION_STATUS", subject: sessionId, description: "running" },
    ]);
  }
  const pending = pendingCalls(active.data.message);
  const what = (c: ToolCallBlock) => (c.state === "asking" ? "confirmation" : "external result");
  throw failedPrecondition(
    `reply ${active.data.replyId} is parked waiting for ${pending
      .map((c) => `${c.name} ${c.id} (${what(c)})`)
      .join(", ")}; answer or interrupt it first`,
    pending.map((c) => ({
      type: "TOOL_CALL_STATE",
      subject: c.id,
      description: `${c.name} is awaiting ${c.state === "asking" ? "confirmation" : "an external result"}`,
    })),
  );
}

/** The parked reply an answer is for; refused when nothing is parked or the reply id is stale. */
export function assertParked<A extends Active>(
  sessionId: string,
  active: A | undefined,
  status: SessionStatus,
  replyId: string,
  what: string,
): A {
  if (!active) {
    throw failedPrecondition(`no reply is parked in session ${sessionId}; nothing awaits ${what}`, [
      { type: "SESSION_STATUS", subject: sessionId, description: status },
    ]);
  }
  assertReply(active.data.replyId, replyId);
  if (active.task) {
    throw failedPrecondition(
      `reply ${active.data.replyId} is running; nothing awaits ${what} yet`,
      [{ type: "SESSION_STATUS", subject: sessionId, description: "running" }],
    );
  }
  return active;
}
