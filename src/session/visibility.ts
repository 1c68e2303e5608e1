import type { EventBody } from "../agent/events.js";
import type { StoredEvent } from "./stored-event.js";

/**
 * The events that may reach streams before they are written: a reply's start, and what the model
 * streams (its text, its thinking, and the tool calls asked for, up to their complete input).
 * Every other event (a tool call's decision or result, REQUIRE_*, REPLY_PARKED, REPLY_END) changes
 * or announces state and is seen only once written, and so is the input's acknowledgement. A crash
 * may lose what was shown: `SeqEpoch` skips past it in every session loaded after the crash (with
 * several nodes, `resumeUnder` in a session taken over from a node that may have shown some).
 */
const EARLY = new Set<EventBody["type"]>([
  "reply_start",
  "model_call_start",
  "model_call_end",
  "text_block_start",
  "text_block_delta",
  "text_block_end",
  "thinking_block_start",
  "thinking_block_delta",
  "thinking_block_end",
  "tool_call_start",
  "tool_call_delta",
  "tool_call_end",
]);

/** Where shown events go: every stream attached to the session. */
export interface FanOut {
  fanOut(event: StoredEvent): void;
}

/**
 * How far a session's streams have been given its events: always a prefix of the log, in seq order.
 * An early event (see `EARLY`) is shown as soon as it is logged when every event before it was
 * shown and it is at most `ahead` past the last written one. A reply's start goes out at once; the
 * model's events only once that start is written (the session is then stored as running, which is
 * what lets `SeqEpoch` skip only one seq for a session stored as idle): a model call's events from
 * its first after the start up to its first delta at once, the others of one turn of the event loop
 * together, after it, so that a stream's writer wakes once per turn. A model call's start is one of
 * those others: it goes after the turn that sends the model's request, which leaves first. Any
 * other event, and every event after it, waits for its write. A crash may lose what was shown and
 * not written: `SeqEpoch` (with several nodes `resumeUnder`) keeps those seqs from being used
 * again. With `holdStart` the reply's start waits for its write like any other event.
 */
export class Visibility {
  /** The seq of the last event counted shown (given to streams, or about to be this turn). */
  private seq: number;
  /** The seq of the last event given to streams. */
  given: number;
  /** The seq of the last reply's start: the model's events wait until it is written. */
  private started = 0;
  /** From a model call's start until its first delta has gone out: early events go at once. */
  private eager = false;
  private queued: StoredEvent[] = [];
  private soon: NodeJS.Immediate | undefined;

  constructor(
    seq: number,
    private readonly ahead: number,
    private readonly streams: FanOut,
    /** The reply's start waits for its write too (and so the model's events, which follow it). */
    private readonly holdStart = false,
  ) {
    this.seq = seq;
    this.given = seq;
  }

  /**
   * Shows `event`, just logged, if it may go before its write: at once for a reply's start and for
   * a model call's events after its start up to its first delta (the first token waits for
   * nothing), after this turn of the event loop for the rest.
   */
  offer(event: StoredEvent, written: number): void {
    const type = event.body.type;
    if (type === "reply_start") this.started = event.seq;
    if (type === "model_call_start") this.eager = true;
    if (!this.early(event, written)) return;
    if (type === "reply_start" || (this.eager && type !== "model_call_start")) {
      if (type === "text_block_delta" || type === "thinking_block_delta") this.eager = false;
      this.flush();
      this.give(event);
      return;
    }
    this.queued.push(event);
    this.soon ??= setImmediate(() => this.flush());
  }

  /**
   * After a write: gives the streams the events it stored that they have not been given, then the
   * early events logged since that waited only for those; with `later`, these after the turn, so
   * that what waited for the write (an input's acknowledgement) reaches the streams first.
   */
  written(
    events: readonly StoredEvent[],
    pending: readonly StoredEvent[],
    written: number,
    later = false,
  ): void {
    this.flush();
    for (const event of events) if (event.seq > this.seq) this.give(event);
    for (const event of pending) {
      if (!this.early(event, written)) break;
      if (later) this.queued.push(event);
      else this.give(event);
    }
    if (this.queued.length > 0) this.soon ??= setImmediate(() => this.flush());
  }

  private early(event: StoredEvent, written: number): boolean {
    if (event.seq !== this.seq + 1 || event.seq - written > this.ahead) return false;
    const type = event.body.type;
    if (!EARLY.has(type) || (type === "reply_start" && this.holdStart)) return false;
    if (type !== "reply_start" && written < this.started) return false;
    this.seq = event.seq;
    return true;
  }

  private flush(): void {
    if (this.soon) clearImmediate(this.soon);
    this.soon = undefined;
    const events = this.queued;
    this.queued = [];
    for (const event of events) this.give(event);
  }

  private give(event: StoredEvent): void {
    this.seq = Math.max(this.seq, event.seq);
    this.given = event.seq;
    this.streams.fanOut(event);
  }
}
