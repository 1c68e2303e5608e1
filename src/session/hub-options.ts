import type { EventBody } from "../agent/events.js";
import type { StoreBatch } from "../store/store.js";
import type { StoredEvent } from "./stored-event.js";

/** What a hub writes besides its events, and whom it tells of its writes (done, failed). */
export interface HubOptions {
  /** The session's record, stored with every write that changed it or moved its last seq. */
  head?: { writeInto(batch: StoreBatch, lastSeq: number): void };
  /** Told once, when a write failed: nothing more is written; memory may be ahead of the store. */
  onFailure?: (error: Error) => void;
  /** Makes each write apply only while the session is this node's (its lease); else it fails. */
  fence?: (batch: StoreBatch) => void;
  /** Told after each write that stored events, with them. */
  committed?: (events: readonly StoredEvent[]) => void;
  /** Told when its last write finished and nothing is left to write (see `EventHub.writing`). */
  idle?: () => void;
  /** Told of every event as it is logged (before it is written), for metrics and traces. */
  observe?: (body: EventBody) => void;
  /** The fields of its log lines (the session, its reply and trace); default the session. */
  logFields?: () => object;
  /**
   * How many events past the last written one may reach streams before their write (the reply's
   * start and the model's stream, see `Visibility`); none by default.
   */
  visibleAhead?: number;
  /**
   * With `visibleAhead`, the reply's start still waits for its write, and the model's stream with
   * it (several nodes: a node shows nothing before a write under its lease has stored it).
   */
  holdStart?: boolean;
  /** Told of every event as the streams are given it (written or not, see `Visibility`). */
  shown?: (event: StoredEvent) => void;
}
