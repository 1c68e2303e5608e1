import type { SessionManager } from "../session/session-manager.js";
import type { SessionStream } from "../session/session-stream.js";
import type { StreamItem } from "../session/stored-event.js";
import type { CallContext } from "./call-context.js";
import type { ServerEvent } from "../generated/parkway/v1/events.js";
import { toRpcStatus } from "./errors.js";
import { eventToPb } from "./mappers/events.js";

/** One item of an attached stream (an event, or an input's acknowledgement) as a ServerEvent. */
export function itemToPb(item: StreamItem, sessionId: string): ServerEvent {
  if (item.kind === "event") return eventToPb(item.event);
  return {
    id: "",
    seq: 0,
    sessionId,
    replyId: "",
    createdAt: new Date(),
    replayed: false,
    event: {
      $case: "inputAck",
      value: {
        requestId: item.ack.requestId,
        status:
          item.ack.error === undefined
            ? { code: 0, message: "", details: [] }
            : toRpcStatus(item.ack.error),
        lastSeq: item.ack.lastSeq ?? 0,
      },
    },
  };
}

/** True for the event that ends or parks a reply. */
export function endsReply(item: StreamItem): boolean {
  return (
    item.kind === "event" &&
    (item.event.body.type === "reply_end" || item.event.body.type === "reply_parked")
  );
}

/** The open streams (Chat and Watch), for the streams gauge. */
export interface OpenStreams {
  open: number;
}

/**
 * Attaches a call's stream to a session (replay after `afterSeq`, re-announced pending calls, live
 * events), counted as open until `attachedEvents` ends; past its backlog the stream ends at once
 * (with the subscriber's error), not when its client reads again.
 */
export async function attachCall(
  manager: SessionManager,
  ctx: CallContext,
  streams: OpenStreams,
  sessionId: string,
  afterSeq: number,
): Promise<SessionStream> {
  const attached = await manager.attach(ctx.principal.tenant, sessionId, afterSeq, ctx.signal);
  streams.open += 1;
  attached.subscriber.whenFailed((err) => ctx.fail(err));
  return attached;
}

/**
 * The ServerEvents of a stream `attachCall` attached, in batches: `first`, then its items, each
 * batch handed to `seen` once written; the session is let go (and the stream no longer counted)
 * however the call ends.
 */
export async function* attachedEvents(
  attached: SessionStream,
  sessionId: string,
  streams: OpenStreams,
  first: readonly ServerEvent[] = [],
  seen?: (items: readonly StreamItem[]) => void,
): AsyncGenerator<readonly ServerEvent[]> {
  try {
    if (first.length > 0) yield first;
    for await (const items of attached.items) {
      yield items.map((item) => itemToPb(item, sessionId));
      seen?.(items);
    }
  } finally {
    streams.open -= 1;
    attached.detach();
  }
}
