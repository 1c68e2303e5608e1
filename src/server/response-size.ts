import { invalidArgument } from "../common/errors.js";
import { DEFAULT_CLIENT_RECEIVE_BYTES } from "../common/message-size.js";
import {
  type CreateSessionRequest,
  ExternalTool,
  Session,
} from "../generated/parkway/v1/agent_service.js";
import { Msg } from "../generated/parkway/v1/content.js";

/**
 * What a client declares in CreateSession and gets back with every Session: its external tools and
 * its metadata are each bounded, so that a Session (with the pending calls of one reply, bounded
 * by the agent's maxReplyBytes) always fits in a client's default 4 MiB.
 */
export const MAX_SESSION_SPEC_BYTES = 256 * 1024;

/**
 * Most bytes of Sessions in one ListSessions page, or of messages in one ListMessages page (a page
 * holds at least one).
 */
export const MAX_LIST_PAGE_BYTES = 3 * 1024 * 1024;

/** Refuses external tools or metadata past `MAX_SESSION_SPEC_BYTES`, naming the field. */
export function checkSessionSpec(request: CreateSessionRequest): void {
  const tools = request.externalTools.reduce(
    (sum, tool) => sum + ExternalTool.encode(tool).finish().length,
    0,
  );
  const metadata = request.metadata ? Buffer.byteLength(JSON.stringify(request.metadata)) : 0;
  for (const [field, bytes] of [
    ["external_tools", tools],
    ["metadata", metadata],
  ] as const) {
    if (bytes > MAX_SESSION_SPEC_BYTES) {
      throw invalidArgument([
        {
          field,
          description: `is ${bytes} bytes, over ${MAX_SESSION_SPEC_BYTES}: every Session carries it, and clients receive at most ${DEFAULT_CLIENT_RECEIVE_BYTES} bytes in one message`,
        },
      ]);
    }
  }
}

/** How many of `items` (in order) fit in `MAX_LIST_PAGE_BYTES` of a page, and never none. */
function itemsThatFit<T>(items: readonly T[], size: (item: T) => number): number {
  let total = 0;
  for (const [i, item] of items.entries()) {
    // Each repeated entry adds its tag and a length of up to 5 bytes.
    total += size(item) + 6;
    if (total > MAX_LIST_PAGE_BYTES) return Math.max(1, i);
  }
  return items.length;
}

/** How many of `sessions` (in order) one ListSessions page carries (see `itemsThatFit`). */
export function sessionsThatFit(sessions: readonly Session[]): number {
  return itemsThatFit(sessions, (s) => Session.encode(s).finish().length);
}

/** How many of `messages` (in order) one ListMessages page carries (see `itemsThatFit`). */
export function messagesThatFit(messages: readonly Msg[]): number {
  return itemsThatFit(messages, (m) => Msg.encode(m).finish().length);
}
