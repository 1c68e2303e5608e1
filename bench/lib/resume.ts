/**
 * Resuming a parked reply, timed as the resume rows measure it: attach (the pending call is
 * re-announced), then confirm → REPLY_END (the noop tool runs, one model call, the reply ends).
 * Shared by the parked-replies rows and the PostgreSQL rows; `parkSession` makes a parked reply
 * through the server itself.
 */
import { FinishedReason } from "../../src/generated/parkway/v1/content.js";
import { attachRaw, caseOf, clientEvent } from "./event-stream.js";
import type { Stack } from "./stack.js";

/** Resumes one parked session; returns µs for attach → re-announced call, and confirm → end. */
export async function resumeOne(
  stack: Stack,
  id: string,
): Promise<{ attach: number; resume: number }> {
  const t0 = performance.now();
  const stream = await attachRaw(stack.client.agentService, id);
  try {
    const [announced] = (await stream.until((e) => caseOf(e) === "requireUserConfirm")).slice(-1);
    const attach = (performance.now() - t0) * 1000;
    const event = announced!.event.event;
    if (event?.$case !== "requireUserConfirm") throw new Error("no re-announced call");
    const call = event.value.toolCalls[0]!;
    const sent = stream.send(
      clientEvent(id, {
        $case: "userConfirmResult",
        value: {
          replyId: "",
          confirmResults: [
            { confirmed: true, toolCall: { ...call, input: "" }, rules: [], reason: "" },
          ],
        },
      }),
    );
    const events = await stream.until((e) => caseOf(e) === "replyEnd");
    const end = events[events.length - 1]!;
    if (
      end.event.event?.$case === "replyEnd" &&
      end.event.event.value.finishedReason !== FinishedReason.FINISHED_REASON_COMPLETED
    ) {
      throw new Error(`resumed reply of ${id} did not complete`);
    }
    return { attach, resume: end.at - sent };
  } finally {
    stream.close();
  }
}

/** A new session of agent "bench" whose reply is parked on one bench_noop call; its id. */
export async function parkSession(stack: Stack): Promise<string> {
  const session = await stack.client.createSession({ agentId: "bench" });
  const stream = await attachRaw(stack.client.agentService, session.id);
  try {
    stream.send(
      clientEvent(session.id, { $case: "userMessage", value: { text: "park", content: [] } }),
    );
    await stream.until((e) => caseOf(e) === "replyParked");
  } finally {
    stream.close();
  }
  return session.id;
}
