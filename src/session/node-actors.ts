import type { Logger } from "../common/logger.js";
import type { Store } from "../store/store.js";
import { ActorRegistry } from "./actor-registry.js";
import type { SessionActor } from "./session-actor.js";
import { type LeaseOptions, SessionLeases } from "./session-leases.js";

/** This node's session actors, and with several nodes its leases. */
export interface NodeActors {
  actors: ActorRegistry;
  leases?: SessionLeases;
  /**
   * With leases, runs `recover` every lease timeout: it ends the replies of nodes that stopped
   * renewing their leases (they died), as a restart would.
   */
  sweep(recover: () => Promise<unknown>): void;
  /** Stops sweeping and renewing. */
  stop(): void;
}

/**
 * This node's session actors, loaded with `load`. With `leaseOptions` (several nodes on one
 * database) an actor is loaded only once its session's lease is taken, so the session is read
 * after every write of the node that held it before; the lease goes with the actor when it leaves
 * memory, and an actor whose lease went to another node is dropped.
 */
export function nodeActors(
  store: Store,
  log: Logger,
  leaseOptions: LeaseOptions | undefined,
  load: (sessionId: string) => Promise<SessionActor>,
): NodeActors {
  if (!leaseOptions)
    return { actors: new ActorRegistry(load), sweep: () => undefined, stop: () => undefined };
  const leases = new SessionLeases(store, log, {
    ...leaseOptions,
    onLost: (id) => actors.drop(actors.cached(id)),
  });
  const actors = new ActorRegistry(
    async (id) => {
      const lease = await leases.acquire(id);
      try {
        const actor = await load(id);
        actor.lease = lease;
        return actor;
      } catch (err) {
        await leases.release(lease);
        throw err;
      }
    },
    (actor) => void (actor.lease && leases.release(actor.lease)),
  );
  let sweeper: NodeJS.Timeout | undefined;
  return {
    actors,
    leases,
    sweep(recover) {
      sweeper = setInterval(() => void recover(), leaseOptions.timeoutMs).unref();
    },
    stop() {
      clearInterval(sweeper);
      leases.close();
    },
  };
}
