import type { StreamItem } from "./stored-event.js";
import type { StreamItems, Subscriber } from "./subscriber.js";

/** A Chat stream attached to a session, as the server's stream handler drives it. */
export interface SessionStream {
  /** The seq of the last stored event when it attached (its replay ends there). */
  readonly lastSeq: number;
  /** The replay, the re-announced pending calls, then live items. */
  readonly items: StreamItems;
  /** Its queue: `whenFailed`, `closed`, and `close` to end it after what is queued. */
  readonly subscriber: Subscriber;
  /** Whether a reply of the session is running, as far as this stream knows. */
  readonly running: boolean;
  /**
   * Sends the outcome of one of its inputs, after the events the input caused: those up to
   * `writtenSeq` when the input was applied on this node (see `Applied.writtenSeq`).
   */
  ack(requestId: string, error?: unknown, writtenSeq?: number): void;
  /** Lets the session go (the stream ended). Idempotent. */
  detach(): void;
}

/** The outcome of an input, as a stream item. */
export function ackItem(requestId: string, error?: unknown): StreamItem {
  return { kind: "ack", ack: { requestId, ...(error === undefined ? {} : { error }) } };
}
