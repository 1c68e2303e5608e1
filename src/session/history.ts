import type { Msg } from "../agent/types.js";
import type { Store } from "../store/store.js";
import { MessageRecord, messageKey } from "./records.js";

/**
 * A session's history: its first `count` messages (user inputs and the final message of each
 * reply), oldest first. `known` is what an earlier call returned for the same session: a message is
 * written once at its index and never changes, so only the messages after it are read (and added
 * to it). The result is the caller's to keep; `known` stays the cache.
 */
export async function readHistory(
  store: Store,
  sessionId: string,
  count: number,
  known: Msg[] = [],
): Promise<Msg[]> {
  if (known.length < count) {
    const from = known.length;
    const read: Msg[] = [];
    for await (const [, msg] of store.entries(MessageRecord, {
      gte: messageKey(sessionId, from),
      lt: messageKey(sessionId, count),
    })) {
      read.push(msg);
    }
    // Another call may have filled it meanwhile: only a read that follows on is added.
    if (known.length === from && read.length === count - from) known.push(...read);
    else return [...known.slice(0, from), ...read];
  }
  return known.slice(0, count);
}
