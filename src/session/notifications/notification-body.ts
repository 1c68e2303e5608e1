import type { NotificationEvent } from "../../config/notification-schema.js";
import type { FinishedReason, ToolCallBlock } from "../../agent/types.js";
import { formatRule } from "../../permissions/index.js";
import { parkKind } from "../reply-telemetry.js";

/** What a notification tells of, as the session knows it when it writes the outbox. */
export interface NotificationFacts {
  event: NotificationEvent;
  tenant: string;
  agent: string;
  sessionId: string;
  replyId: string;
  /** The seq to attach after: a stream attached there is re-announced every call still pending. */
  attachAfterSeq: number;
  /** The calls waiting for an answer (`reply.parked`). */
  pending?: readonly ToolCallBlock[];
  /** The calls whose deadline passed (`call.expired`). */
  expired?: readonly ToolCallBlock[];
  /** How the reply ended (`reply.ended`). */
  finishedReason?: FinishedReason;
}

/** One call in a notification: what it is, why it asks, and what answering it could allow. */
export interface NotifiedCall {
  callId: string;
  tool: string;
  /** The call's input (parsed JSON; the raw text when it is not JSON). */
  input: unknown;
  /** What it waits for: a person's confirmation, an external result, or an AskUser answer. */
  waitsFor: "confirm" | "external" | "ask_user";
  /** Why it asks (the permission engine's, or the policy service's, reason). */
  reason?: string;
  /** The check or rule kind that decided. */
  check?: string;
  /** Rules a person may accept with the confirmation, in display form, e.g. "Bash(npm test:*)". */
  suggestedRules: string[];
  /** When it expires unanswered, if it does. */
  expiresAt?: string;
  /**
   * A single-use link that allows or denies the call with one POST (`{"decision":"allow"}` or
   * `{"decision":"deny","reason":"…"}`), when the receiver is configured with `answerLinks`: added
   * by each attempt that sends the notification, valid until `expiresAt` (`ttl` from that attempt,
   * or the call's own `expiresAt` when that is sooner).
   */
  answer?: { url: string; expiresAt: string };
}

/** The JSON body of a notification (documented in the README, "Park notifications"). */
export interface NotificationBody {
  id: string;
  event: NotificationEvent;
  createdAt: string;
  tenant: string;
  agent: string;
  session: string;
  reply: string;
  attachAfterSeq: number;
  /** The earliest deadline of the pending calls, if any expires. */
  deadline?: string;
  pending: NotifiedCall[];
  expired?: NotifiedCall[];
  finishedReason?: FinishedReason;
}

function parsedInput(input: string): unknown {
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return input;
  }
}

/** A call as notifications show it. */
export function notifiedCall(call: ToolCallBlock): NotifiedCall {
  const decision = call.decision;
  return {
    callId: call.id,
    tool: call.name,
    input: parsedInput(call.input),
    waitsFor: parkKind(call),
    ...(decision ? { reason: decision.reason, check: decision.check } : {}),
    suggestedRules: (call.suggestedRules ?? decision?.suggestedRules ?? []).map(formatRule),
    ...(call.expiresAt ? { expiresAt: call.expiresAt } : {}),
  };
}

/** The earliest of the calls' deadlines. */
function deadline(calls: readonly NotifiedCall[]): string | undefined {
  const times = calls.flatMap((c) => (c.expiresAt ? [c.expiresAt] : []));
  return times.length > 0 ? times.sort()[0] : undefined;
}

/** The body of delivery `id` of `facts`. */
export function notificationBody(id: string, facts: NotificationFacts): NotificationBody {
  const pending = (facts.pending ?? []).map(notifiedCall);
  const until = deadline(pending);
  return {
    id,
    event: facts.event,
    createdAt: new Date().toISOString(),
    tenant: facts.tenant,
    agent: facts.agent,
    session: facts.sessionId,
    reply: facts.replyId,
    attachAfterSeq: facts.attachAfterSeq,
    ...(until ? { deadline: until } : {}),
    pending,
    ...(facts.expired ? { expired: facts.expired.map(notifiedCall) } : {}),
    ...(facts.finishedReason ? { finishedReason: facts.finishedReason } : {}),
  };
}

/**
 * The body with only the calls still waiting (`stillWaiting`): a notification sent after some of
 * its calls were answered never shows them as pending. Undefined when none is left.
 */
export function stillPending(
  body: NotificationBody,
  stillWaiting: ReadonlySet<string>,
): NotificationBody | undefined {
  const pending = body.pending.filter((c) => stillWaiting.has(c.callId));
  if (pending.length === 0) return undefined;
  if (pending.length === body.pending.length) return body;
  const rest: NotificationBody = { ...body, pending };
  delete rest.deadline;
  const until = deadline(pending);
  return until ? { ...rest, deadline: until } : rest;
}
