import type { ActorRegistry } from "./actor-registry.js";
import { checkAttach } from "./attach-checks.js";
import { firstAvailableSeq } from "./retention.js";
import type { SessionActor } from "./session-actor.js";
import type { FollowLimits } from "./session-followers.js";
import { ackItem, type SessionStream } from "./session-stream.js";

/**
 * A stream attached to the hub of the session's actor (one use of it held by the caller, given back
 * here). Attached, the stream holds the actor in memory until `detach`; refused, the actor may leave
 * memory at once.
 */
export function hubStream(
  actors: ActorRegistry,
  actor: SessionActor,
  afterSeq: number,
  signal: AbortSignal,
  limits: FollowLimits,
): SessionStream {
  try {
    checkAttach(
      {
        id: actor.id,
        firstAvailableSeq: firstAvailableSeq(actor.head.data),
        lastSeq: actor.events.lastSeq,
        attached: actor.events.attached,
      },
      afterSeq,
      limits.streamsPerSession,
    );
    const attached = actor.attach(afterSeq, signal, limits.streamBacklogEvents);
    let detached = false;
    return {
      lastSeq: attached.lastSeq,
      items: attached.items,
      subscriber: attached.subscriber,
      get running() {
        return actor.snapshot.status === "running";
      },
      ack: (requestId, error) => attached.subscriber.push(ackItem(requestId, error)),
      detach() {
        if (detached) return;
        detached = true;
        attached.detach();
        actors.release(actor);
      },
    };
  } finally {
    actors.giveBack(actor);
  }
}
