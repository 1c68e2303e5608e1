import type { EventBody } from "../agent/events.js";
import { newId } from "../common/ids.js";
import { isoNow } from "../common/iso-now.js";
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
  private lastEvent: number;

  /** `seq`: the last seq used; the last event's, unless seqs were skipped after it (`SeqEpoch`). */
  constructor(
    private readonly store: Store,
    readonly sessionId: string,
    private seq: number,
    lastEvent = seq,
  ) {
    this.lastEvent = lastEvent;
  }

  /** The last seq used: the next event gets the one after it. */
  get lastSeq(): number {
    return this.seq;
  }

  /** The seq of the last event appended (written or not). */
  get lastEventSeq(): number {
    return this.lastEvent;
  }

  get hasPending(): boolean {
    return this.pendingEvents.length > 0;
  }

  /** Assigns the next seq to an event body and keeps it for the next write. */
  append(replyId: string, body: EventBody): StoredEvent {
    this.seq += 1;
    this.lastEvent = this.seq;
    const event: StoredEvent = {
      id: newId("evt"),
      seq: this.seq,
      sessionId: this.sessionId,
      replyId,
      createdAt: isoNow(),
      body,
    };
    this.pendingEvents.push(event);
    return event;
  }

  /** Forgets the events not written and gives the next event `seq + 1` again. */
  rollback(seq: number): void {
    this.pendingEvents = [];
    this.seq = seq;
    this.lastEvent = Math.min(this.lastEvent, seq);
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

  /** Puts events (consecutive, in seq order) into a batch as one chunk. */
  putInto(batch: StoreBatch, events: readonly StoredEvent[]): void {
    const last = events[events.length - 1];
    if (!last) return;
    batch.put(EventRecord, eventKey(this.sessionId, last.seq), {
      events: events.map((e) => ({
        id: e.id,
        seq: e.seq,
        replyId: e.replyId,
        createdAt: e.createdAt,
        body: e.body,
      })),
    });
  }

  /** The keys of the chunks whose events all have seq ≤ uptoSeq and some seq > afterSeq. */
  async chunkKeys(afterSeq: number, uptoSeq: number): Promise<string[]> {
    const keys: string[] = [];
    if (uptoSeq <= afterSeq) return keys;
    for await (const key of this.store.keys(EventRecord, {
      gt: eventKey(this.sessionId, afterSeq),
      lte: eventKey(this.sessionId, uptoSeq),
    })) {
      keys.push(key);
    }
    return keys;
  }

  /** Reads stored events with afterSeq < seq ≤ uptoSeq, in order. */
  async *read(
    afterSeq: number,
    uptoSeq: number,
    signal?: AbortSignal,
  ): AsyncGenerator<StoredEvent> {
    if (uptoSeq <= afterSeq) return;
    // The chunks from the one holding afterSeq + 1, until one holds an event past uptoSeq.
    for await (const [, record] of this.store.entries(EventRecord, {
      gt: eventKey(this.sessionId, afterSeq),
      lt: `${this.sessionId}0`, // "/" sorts before "0": the end of this session's keys
      ...(signal ? { signal } : {}),
    })) {
      for (const e of record.events) {
        if (e.seq > uptoSeq) return;
        if (e.seq <= afterSeq) continue;
        yield {
          id: e.id,
          seq: e.seq,
          sessionId: this.sessionId,
          replyId: e.replyId,
          createdAt: e.createdAt,
          body: e.body as unknown as EventBody,
        };
      }
    }
  }
}
