import type { Msg } from "../agent/types.js";
import type { Store } from "../store/store.js";
import { MessageRecord, messageKey } from "./records.js";

/**
 * A session's history: its first `count` messages (user inputs and the final message of each
 * reply), oldest first.
 */
export async function readHistory(store: Store, sessionId: string, count: number): Promise<Msg[]> {
  const out: Msg[] = [];
  if (count === 0) return out;
  for await (const [, msg] of store.entries(MessageRecord, {
    gte: messageKey(sessionId, 0),
    lt: messageKey(sessionId, count),
  })) {
    out.push(msg);
  }
  return out;
}
