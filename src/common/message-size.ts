/**
 * The sizes every message the server sends is held under. gRPC clients receive at most 4 MiB in one
 * message unless they raise their limit; nothing the server stores or sends may need more.
 */

/** gRPC's default receive limit of a client: 4 MiB. */
export const DEFAULT_CLIENT_RECEIVE_BYTES = 4 * 1024 * 1024;

/**
 * The default of an agent's `maxReplyBytes`: 1.5 MiB. The largest message about one reply is
 * Reply's response for a parked reply, which carries the waiting calls twice (in the waiting
 * notice and in pending_tool_calls): twice 1.5 MiB plus framing leaves 1 MiB under 4 MiB.
 */
export const DEFAULT_MAX_REPLY_BYTES = 1536 * 1024;

/** The most `maxReplyBytes` may be: twice it plus framing still fits in 4 MiB. */
export const MAX_REPLY_BYTES = 1792 * 1024;
