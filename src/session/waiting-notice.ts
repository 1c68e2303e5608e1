import { isoNow } from "../common/iso-now.js";
import type { Msg, ToolCallBlock } from "../agent/types.js";
import { newId } from "../common/ids.js";
import { callSnapshot } from "../agent/copies.js";

/**
 * The waiting notice of a parked reply: id = reply id, finished_reason unset, a text saying what
 * is awaited, and the awaited calls.
 */
export function waitingNotice(message: Msg, pending: ToolCallBlock[]): Msg {
  const lines = pending.map(
    (c) =>
      `${c.name} (${c.id}) is ${c.state === "asking" ? "waiting for confirmation" : "waiting for an external result"}`,
  );
  return {
    id: message.id,
    role: "assistant",
    name: message.name,
    content: [
      { type: "text", id: newId("blk"), text: `The reply is parked. ${lines.join("; ")}.` },
      ...pending.map((c) => callSnapshot(c)),
    ],
    ...(message.usage ? { usage: message.usage } : {}),
    createdAt: isoNow(),
  };
}
