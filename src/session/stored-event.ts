import type { EventBody } from "../agent/events.js";

/** An event with its place in the session's log. */
export interface StoredEvent {
  id: string;
  seq: number;
  sessionId: string;
  replyId: string;
  createdAt: string;
  body: EventBody;
  /** True when sent again: replayed after attach, or a pending REQUIRE_* re-announced. */
  replayed?: boolean;
}

/** The outcome of one client input, sent only to the stream that sent it. */
export interface InputAck {
  requestId: string;
  /** Undefined when the input was applied; the refusal otherwise. */
  error?: unknown;
  /** For attach: the last seq when replay began. */
  lastSeq?: number;
}

/** What a subscriber receives: a session event, or the ack of one of its own inputs. */
export type StreamItem = { kind: "event"; event: StoredEvent } | { kind: "ack"; ack: InputAck };
