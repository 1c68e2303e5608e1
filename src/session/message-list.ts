import type { Msg } from "../agent/types.js";
import { invalidArgument } from "../common/errors.js";
import type { Store } from "../store/store.js";
import { MessageRecord, messageKey, type SessionData } from "./records.js";

/** Which page of a session's messages to read. */
export interface MessagePageRequest {
  pageSize: number;
  /** The index of the oldest message of the previous page, in decimal; absent for the first page. */
  pageToken?: string;
}

/** A message with its place in the session: history message `index`, or the active reply's. */
export interface IndexedMessage {
  index: number;
  message: Msg;
}

/** One page of messages newest first, and the token of the next (older) page when there is one. */
export interface MessagePage {
  messages: IndexedMessage[];
  nextPageToken?: string;
}

/**
 * The messages of session `data`, newest first, `pageSize` at a time: its history (user messages
 * and the final message of each finished reply, indices 0 to messageCount - 1, kept after
 * retention compacts the replies' events) and, newest, the message so far of its active reply
 * (`active`, numbered messageCount: the index its final message takes when the reply ends). The
 * page token is the index of the previous page's oldest message; INVALID_ARGUMENT (page_token) for
 * one that this session cannot have given.
 */
export async function listMessages(
  store: Store,
  data: SessionData,
  active: Msg | undefined,
  page: MessagePageRequest,
): Promise<MessagePage> {
  const count = data.messageCount;
  let before = active ? count + 1 : count;
  if (page.pageToken !== undefined) {
    const token = /^\d{1,10}$/.test(page.pageToken) ? Number(page.pageToken) : NaN;
    if (!(token <= count + 1)) {
      throw invalidArgument([{ field: "page_token", description: "is not a token of this list" }]);
    }
    before = Math.min(before, token);
  }
  const messages: IndexedMessage[] = [];
  if (active && before > count) messages.push({ index: count, message: active });
  const from = Math.max(0, before - (page.pageSize - messages.length));
  for await (const [key, message] of store.entries(MessageRecord, {
    reverse: true,
    gte: messageKey(data.id, from),
    lt: messageKey(data.id, Math.min(before, count)),
  })) {
    messages.push({ index: Number(key.slice(key.lastIndexOf("/") + 1)), message });
  }
  const oldest = messages[messages.length - 1]?.index ?? 0;
  return oldest > 0 ? { messages, nextPageToken: String(oldest) } : { messages };
}
