import type { EventBody } from "../agent/events.js";
import { newId } from "../common/ids.js";
import type { Store, StoreBatch } from "../store/store.js";
import { EventRecord, eventKey } from "./records.js";
import type { StoredEvent } from "./stored-event.js";

/**
 * A session's event log: gives each event the next seq (strictly increasing, gap-free), keeps the
 * events not yet written, and reads stored ranges back. Writing is the owner's: it takes the pending
 * events into its own atomic batches, so events commit together with the state they belong to.
 */
export class EventLog {
  private pendingEvents: StoredEvent[] = [];

  constructor(
    private readonly store: Store,
    readonly sessionId: string,
    private seq: number,
  ) {}

  /** The seq of the last event appended (written or not). */
  get lastSeq(): number {
    return this.seq;
  }

  get hasPending(): boolean {
    return this.pendingEvents.length > 0;
  }

  /** Assigns the next seq to an event body and keeps it for the next write. */
  append(replyId: string, body: EventBody): StoredEvent {
    this.seq += 1;
    const event: StoredEvent = {
      id: newId("evt"),
      seq: this.seq,
      sessionId: this.sessionId,
      replyId,
      createdAt: new Date().toISOString(),
      body,
    };
    this.pendingEvents.push(event);
    return event;
  }

  /** The events not yet handed to a write. */
  peekPending(): readonly StoredEvent[] {
    return this.pendingEvents;
  }

  /** Takes every event not yet handed to a write. */
  drainPending(): StoredEvent[] {
    const events = this.pendingEvents;
    this.pendingEvents = [];
    return events;
  }

  /** Puts one event into a batch. */
  putInto(batch: StoreBatch, e: StoredEvent): void {
    batch.put(EventRecord, eventKey(this.sessionId, e.seq), {
      id: e.id,
      seq: e.seq,
      replyId: e.replyId,
      createdAt: e.createdAt,
      body: e.body,
    });
  }

  /** Reads stored events with afterSeq < seq ≤ uptoSeq, in order. */
  async *read(
    afterSeq: number,
    uptoSeq: number,
    signal?: AbortSignal,
  ): AsyncGenerator<StoredEvent> {
    if (uptoSeq <= afterSeq) return;
    for await (const [, record] of this.store.entries(EventRecord, {
      gt: eventKey(this.sessionId, afterSeq),
      lte: eventKey(this.sessionId, uptoSeq),
      ...(signal ? { signal } : {}),
    })) {
      yield {
        id: record.id,
        seq: record.seq,
        sessionId: this.sessionId,
        replyId: record.replyId,
        createdAt: record.createdAt,
        body: record.body as unknown as EventBody,
      };
    }
  }
}
