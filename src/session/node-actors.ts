import type { Logger } from "../common/logger.js";
import { LocalSignals, type StoreSignals } from "../store/signals.js";
import type { Store } from "../store/store.js";
import { ActorRegistry } from "./actor-registry.js";
import { type ApplyHere, Inbox } from "./inbox.js";
import type { SessionActor } from "./session-actor.js";
import { SessionFollowers } from "./session-followers.js";
import { type LeaseOptions, SessionLeases } from "./session-leases.js";
import type { SessionReader } from "./session-reader.js";
import { inboxTopic } from "./signal-topics.js";

/** This node's session actors, and with several nodes its leases, followers and inbox. */
export interface NodeActors {
  actors: ActorRegistry;
  leases?: SessionLeases;
  /** Streams that follow sessions through the store (several nodes). */
  followers?: SessionFollowers;
  /** Inputs forwarded to the node that serves their session (several nodes). */
  inbox?: Inbox;
  /** Wake-ups between the nodes (several nodes). */
  signals?: StoreSignals;
  /** Starts listening to the other nodes. */
  open(): Promise<void>;
  /**
   * With leases, runs `recover` every lease timeout: it ends the replies of nodes that stopped
   * renewing their leases (they died), as a restart would.
   */
  sweep(recover: () => Promise<unknown>): void;
  /** Stops sweeping, renewing and listening; the streams following sessions end with `error`. */
  stop(error: Error): Promise<void>;
}

/** What several nodes on one database share besides the store. */
export interface ClusterOptions extends LeaseOptions {
  /** In this process only by default. */
  signals?: StoreSignals | undefined;
  reader: SessionReader;
  /** Applies an input on this node (see `Inbox`). */
  applyHere: ApplyHere;
}

/**
 * This node's session actors, loaded with `load`. With `cluster` (several nodes on one database) an
 * actor is loaded only once its session's lease is taken, so the session is read after every write
 * of the node that held it before; the lease goes with the actor when it leaves memory, and an actor
 * whose lease went to another node is dropped. While it holds a session, the node applies the
 * inputs other nodes forward to it (its inbox). Streams follow sessions through the store instead of
 * holding their actors, so a node holds a session only while it runs its reply or applies an input.
 */
export function nodeActors(
  store: Store,
  log: Logger,
  cluster: ClusterOptions | undefined,
  load: (sessionId: string) => Promise<SessionActor>,
): NodeActors {
  if (!cluster) {
    const actors = new ActorRegistry(load);
    const none = () => Promise.resolve();
    return { actors, open: none, sweep: () => undefined, stop: none };
  }
  const { reader, applyHere, ...leaseOptions } = cluster;
  const signals = cluster.signals ?? new LocalSignals();
  const leases = new SessionLeases(store, log, {
    ...leaseOptions,
    onLost: (id) => actors.drop(actors.cached(id)),
  });
  const pollMs = Math.min(1000, Math.max(20, leaseOptions.timeoutMs / 4));
  const inbox = new Inbox(
    { store, signals, log, nodeId: leases.nodeId, pollMs, timeoutMs: 4 * leaseOptions.timeoutMs },
    applyHere,
  );
  const followers = new SessionFollowers({ store, reader, signals, pollMs: 2 * pollMs });
  const inboxWatches = new Map<SessionActor, () => void>();
  const actors = new ActorRegistry(
    async (id) => {
      const lease = await leases.acquire(id);
      try {
        const actor = await load(id);
        actor.lease = lease;
        inboxWatches.set(
          actor,
          signals.watch(inboxTopic(id), () => void inbox.drain(id)),
        );
        // Inputs forwarded to a node that let the session go, or died, wait here.
        setImmediate(() => void inbox.drain(id));
        return actor;
      } catch (err) {
        await leases.release(lease);
        throw err;
      }
    },
    (actor) => {
      inboxWatches.get(actor)?.();
      inboxWatches.delete(actor);
      if (actor.lease) void leases.release(actor.lease);
    },
  );
  let sweeper: NodeJS.Timeout | undefined;
  return {
    actors,
    leases,
    followers,
    inbox,
    signals,
    open: () => signals.open(),
    sweep(recover) {
      sweeper = setInterval(() => void recover(), leaseOptions.timeoutMs).unref();
    },
    async stop(error) {
      clearInterval(sweeper);
      leases.close();
      followers.closeAll(error);
      await signals.close();
    },
  };
}
