import type { EventBody } from "../agent/events.js";
import type { StoredEvent } from "./stored-event.js";

/**
 * The events that may reach streams before they are written: what the model streams. They come only
 * while the session is stored as running (the write that starts or resumes a reply is done before
 * the model is called), which is what lets `SeqEpoch` skip seqs only for such sessions. Every other
 * event (REPLY_START, a tool call, its result, REQUIRE_*, REPLY_PARKED, REPLY_END) changes or
 * announces state and is seen only once written.
 */
const EARLY = new Set<EventBody["type"]>([
  "model_call_start",
  "model_call_end",
  "text_block_start",
  "text_block_delta",
  "text_block_end",
  "thinking_block_start",
  "thinking_block_delta",
  "thinking_block_end",
]);

/**
 * How far a session's streams have been given its events: always a prefix of the log, in seq order.
 * An early event (see `EARLY`) is shown as soon as it is logged when every event before it was
 * shown and it is at most `ahead` past the last written one; any other event, and every event after
 * it, waits for its write. A crash may lose what was shown and not written: `SeqEpoch` keeps those
 * seqs from being used again.
 */
export class Visibility {
  constructor(
    /** The seq of the last event given to streams. */
    public seq: number,
    private readonly ahead: number,
  ) {}

  /** Whether `event`, just logged, goes to streams now (and counts it shown). */
  early(event: StoredEvent, written: number): boolean {
    if (event.seq !== this.seq + 1 || event.seq - written > this.ahead) return false;
    if (!EARLY.has(event.body.type)) return false;
    this.seq = event.seq;
    return true;
  }

  /** The events of a finished write that streams have not been given yet, counted shown. */
  written(events: readonly StoredEvent[]): StoredEvent[] {
    const last = events[events.length - 1];
    if (!last || last.seq <= this.seq) return [];
    const late = events.filter((e) => e.seq > this.seq);
    this.seq = last.seq;
    return late;
  }
}
