import { Wakeup } from "../common/wakeup.js";
import type { StoreSignals } from "../store/signals.js";
import type { Store } from "../store/store.js";
import {
  MessageRecord,
  messageKey,
  ReplyRecord,
  RequestRecord,
  requestKey,
  SessionRecord,
} from "./records.js";
import { parkedOutcome, type ReplySettled } from "./reply-outcomes.js";
import { eventsTopic } from "./signal-topics.js";

/**
 * The first outcome of an input applied with `requestId` (the settlement that followed it), read
 * from the store: "running" while its reply has not settled, undefined when none is known (an
 * input that started no reply, or a session deleted).
 */
export async function storedOutcome(
  store: Store,
  sessionId: string,
  requestId: string,
): Promise<ReplySettled | "running" | undefined> {
  const record = await store.get(RequestRecord, requestKey(sessionId, requestId));
  if (!record) return undefined;
  if (record.parked) return parkedOutcome(record.parked);
  if (record.messageIndex === undefined || record.replyId === undefined) return undefined;
  const final = await store.get(MessageRecord, messageKey(sessionId, record.messageIndex));
  if (final?.id === record.replyId) return { message: final, status: "idle", pending: [] };
  const reply = await store.get(ReplyRecord, sessionId);
  if (reply?.replyId !== record.replyId) return undefined;
  return (await store.get(SessionRecord, sessionId)) ? "running" : undefined;
}

/**
 * Waits for the first outcome of an input applied (on any node) with `requestId`: read again after
 * every stored event of the session (its signal) and at least every `pollMs`.
 */
export async function waitForOutcome(
  store: Store,
  signals: StoreSignals,
  sessionId: string,
  requestId: string,
  pollMs: number,
): Promise<ReplySettled | undefined> {
  const wakeup = new Wakeup();
  const unwatch = signals.watch(eventsTopic(sessionId), wakeup.notify);
  try {
    for (;;) {
      const outcome = await storedOutcome(store, sessionId, requestId);
      if (outcome !== "running") return outcome;
      await wakeup.wait(pollMs);
    }
  } finally {
    unwatch();
  }
}
