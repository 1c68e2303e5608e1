import type { ActorRegistry } from "./actor-registry.js";
import { checkAttach } from "./attach-checks.js";
import { firstAvailableSeq } from "./retention.js";
import type { SessionActor } from "./session-actor.js";
import type { FollowLimits } from "./session-followers.js";
import { ackItem, type SessionStream } from "./session-stream.js";
import type { Attached } from "./subscriber.js";

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
  afterSeqField: string,
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
      afterSeqField,
    );
    return new HubStream(actors, actor, actor.attach(afterSeq, signal, limits.streamBacklogEvents));
  } finally {
    actors.giveBack(actor);
  }
}

/** A stream on its actor's hub: one object per stream, its methods shared. */
class HubStream implements SessionStream {
  readonly lastSeq: number;
  readonly items: Attached["items"];
  readonly subscriber: Attached["subscriber"];
  private attached: Attached | undefined;

  constructor(
    private readonly actors: ActorRegistry,
    private readonly actor: SessionActor,
    attached: Attached,
  ) {
    this.lastSeq = attached.lastSeq;
    this.items = attached.items;
    this.subscriber = attached.subscriber;
    this.attached = attached;
  }

  /**
   * As far as this stream knows: the session's status is ahead of the stream while events logged
   * before it changed wait for their write (a park's REQUIRE_* and REPLY_PARKED), so until every
   * event emitted is given to the streams the reply counts as running.
   */
  get running(): boolean {
    const hub = this.actor.events;
    return this.actor.snapshot.status === "running" || hub.shown.given < hub.lastEventSeq;
  }

  ack(requestId: string, error?: unknown): void {
    this.subscriber.push(ackItem(requestId, error));
  }

  detach(): void {
    const attached = this.attached;
    if (!attached) return;
    this.attached = undefined;
    attached.detach();
    this.actors.release(this.actor);
  }
}
