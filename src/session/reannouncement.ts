import type { EventBody } from "../agent/events.js";
import type { ToolCallBlock } from "../agent/types.js";
import { newId } from "../common/ids.js";
import type { StoredEvent, StreamItem } from "./stored-event.js";

/** Adds the ids of the calls a REQUIRE_* event announces. */
export function noteAnnounced(event: StoredEvent, into: Set<string>): void {
  const body = event.body;
  if (body.type === "require_user_confirm" || body.type === "require_external_execution") {
    for (const call of body.toolCalls) into.add(call.id);
  }
}

/**
 * The pending calls of a parked reply announced again (seq 0, marked replayed), leaving out those
 * the stream sees anyway: announced in the replay or in events not written yet.
 */
export function reannouncement(
  sessionId: string,
  pending: { replyId: string; calls: ToolCallBlock[] } | undefined,
  announced: Set<string>,
  replayed: Set<string>,
): StreamItem[] {
  if (!pending) return [];
  const fresh = pending.calls.filter((c) => !announced.has(c.id) && !replayed.has(c.id));
  const out: StreamItem[] = [];
  const again = (body: EventBody): StreamItem => ({
    kind: "event",
    event: {
      id: newId("evt"),
      seq: 0,
      sessionId,
      replyId: pending.replyId,
      createdAt: new Date().toISOString(),
      replayed: true,
      body,
    },
  });
  const asking = fresh.filter((c) => c.state === "asking");
  const submitted = fresh.filter((c) => c.state === "submitted");
  if (asking.length > 0) out.push(again({ type: "require_user_confirm", toolCalls: asking }));
  if (submitted.length > 0) {
    out.push(again({ type: "require_external_execution", toolCalls: submitted }));
  }
  return out;
}
