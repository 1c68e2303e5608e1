import type { Msg } from "../agent/types.js";
import { limitReached } from "../common/limits.js";
import type { Store } from "../store/store.js";
import type { ReplySettled } from "./reply-outcomes.js";
import { CONFIRM_RESULTS, EXECUTION_RESULTS } from "./answer-fields.js";
import { awaitedRun } from "./pending-calls.js";
import { findCalls } from "./answered-calls.js";
import { lookupRequest, type RequestIdLimits } from "./request-ids.js";
import type { SessionActor } from "./session-actor.js";
import type { SessionInput } from "./session-input.js";

/** How an input was applied (see `SessionManager.apply`). */
export interface Applied {
  /** The reply the input started, answered or interrupted; none for an interrupt of an idle session. */
  replyId?: string;
  settled?: Promise<ReplySettled>;
  duplicate?: boolean;
  firstOutcome?: () => Promise<ReplySettled | undefined>;
  /**
   * Applied on this node: the seq of the last event written when it was, so every event it caused
   * is at or before it (and was handed to this node's streams). None for a duplicate.
   */
  writtenSeq?: number;
}

/** What applying an input checks besides the session itself. */
export interface ApplyLimits {
  store: Store;
  requestIds: RequestIdLimits;
  /** Most replies running at once; an input that would start or resume one more is refused. */
  runningReplies: number | undefined;
  /** How many replies are running now. */
  running: () => number;
  /** Throws when the server no longer accepts changes. */
  assertAccepting: () => void;
}

/** Most runs an answer waits out before it is applied (each parks again with its calls). */
const MAX_RUNS_WAITED = 8;

/** The ids of the calls `input` answers (none for a message or an interrupt). */
function answeredIds(input: SessionInput): string[] {
  if (input.kind !== "confirm" && input.kind !== "external_results") return [];
  return input.answers.map((answer) => answer.toolCallId);
}

/**
 * Applies one input to `actor`, after every input before it: once per request id (a retry of the
 * same input is a `duplicate` with its first outcome; a different input under a used id is
 * refused), within the running-replies limit (an interrupt is always taken). `replyId` is the reply
 * the input started, answered or interrupted (for a retry, the one it did the first time). `trace`
 * is the `traceparent` of the call that brought it: a reply it starts or resumes is traced under it.
 */
export async function applyInput(
  limits: ApplyLimits,
  actor: SessionActor,
  input: SessionInput,
  principal: string,
  requestId: string | undefined,
  trace?: string,
): Promise<Applied> {
  // While the reply runs on from another answer to the same park and the calls this input answers
  // still await it there (two people answering two calls at once), the run parks again with them:
  // the answer waits for that, outside the actor's queue (an interrupt still goes first).
  const ids = answeredIds(input);
  for (let runs = 0; ; runs++) {
    const outcome = await actor.serial(
      async (): Promise<{ run: Promise<void> } | { applied: Applied }> => {
        const run =
          runs < MAX_RUNS_WAITED
            ? awaitedRun(actor.reply.task, actor.reply.message, ids)
            : undefined;
        return run ? { run } : { applied: await apply() };
      },
    );
    if ("applied" in outcome) return outcome.applied;
    await outcome.run;
  }

  async function apply(): Promise<Applied> {
    limits.assertAccepting();
    let ticket;
    if (requestId) {
      const found = await lookupRequest(
        limits.store,
        actor.id,
        requestId,
        input,
        actor.head.nextRequest,
        limits.requestIds,
        actor.outcomes.requests,
      );
      if ("duplicate" in found) {
        return {
          duplicate: true,
          ...(found.duplicate.replyId ? { replyId: found.duplicate.replyId } : {}),
          firstOutcome: () => actor.firstOutcome(requestId, found.duplicate),
        };
      }
      ticket = found.ticket;
    }
    const max = limits.runningReplies;
    if (max !== undefined && input.kind !== "user_interrupt" && limits.running() >= max) {
      throw limitReached("runningReplies", max, "too many replies are running; retry later");
    }
    if (input.kind === "user_message") {
      const started = await actor.startReply(input.text, ticket, trace);
      return { ...started, writtenSeq: actor.events.writtenSeq };
    }
    // An answer or an interrupt acts on the session's running or parked reply, if any.
    const active = actor.head.data.replyId;
    // While it runs, an answer naming a call the run does not wait for (finished, not decided yet)
    // is refused with that call's state, as for a parked reply: waiting would not help.
    // With no reply at all, one naming a call of the last reply (ended or interrupted since) is
    // refused with that call's state too.
    const [wanted, field] =
      input.kind === "confirm"
        ? (["asking", CONFIRM_RESULTS] as const)
        : (["submitted", EXECUTION_RESULTS] as const);
    const current = [active, ""].includes(input.replyId);
    if (current && actor.reply.task && actor.reply.message && ids.length > 0) {
      findCalls(actor.reply.message, ids, wanted, field);
    }
    const last = active ? undefined : lastReplyMessage(actor);
    if (last && ids.length > 0 && [last.id, ""].includes(input.replyId)) {
      if (last.content.some((b) => b.type === "tool_call" && ids.includes(b.id))) {
        findCalls(last, ids, wanted, field);
      }
    }
    const applied: Applied =
      input.kind === "user_interrupt"
        ? await actor.interrupt(input.replyId, principal, ticket)
        : input.kind === "confirm"
          ? await actor.confirm(input.replyId, input.answers, principal, ticket, trace)
          : await actor.externalResults(input.replyId, input.answers, principal, ticket, trace);
    const writtenSeq = actor.events.writtenSeq;
    return active ? { ...applied, replyId: active, writtenSeq } : { ...applied, writtenSeq };
  }
}

/** The final message of the session's last reply, when the session holds its history in memory. */
function lastReplyMessage(actor: SessionActor): Msg | undefined {
  const { history, data } = actor.head;
  const last = history.length === data.messageCount ? history.at(-1) : undefined;
  return last?.role === "assistant" ? last : undefined;
}
