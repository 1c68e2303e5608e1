import type { Logger } from "../common/logger.js";
import { Listeners, SignalBus, type StoreSignals } from "../store/signals.js";
import type { Store } from "../store/store.js";
import { ActorRegistry } from "./actor-registry.js";
import { DormantActors } from "./dormant-actors.js";
import { LingeringActors } from "./lingering-actors.js";
import { type ApplyHere, Inbox } from "./inbox.js";
import { type SessionData, SessionRecord } from "./records.js";
import type { SessionActor } from "./session-actor.js";
import { SessionFollowers } from "./session-followers.js";
import { type Lease, type LeaseOptions, SessionLeases } from "./session-leases.js";
import type { SessionReader } from "./session-reader.js";
import { eventsTopic, inboxTopic } from "./signal-topics.js";
import type { StoredEvent } from "./stored-event.js";
import { SeqEpoch } from "./seq-epoch.js";

/** This node's session actors, and with several nodes its leases, followers and inbox. */
export interface NodeActors {
  actors: ActorRegistry;
  leases?: SessionLeases;
  /** Streams that follow sessions through the store (several nodes). */
  followers?: SessionFollowers;
  /** Inputs forwarded to the node that serves their session (several nodes). */
  inbox?: Inbox;
  /** Wake-ups of this node's and the other nodes' listeners (several nodes). */
  signals?: StoreSignals;
  /**
   * Hands events this node stored (none: something else changed, read again) to the streams that
   * follow their session here, and signals the other nodes (several nodes).
   */
  published?: (sessionId: string, events: readonly StoredEvent[]) => void;
  /**
   * Hands an event this node's actor gave to its streams, stored or not yet, to the streams that
   * follow its session here (several nodes; see `resumeUnder` for why that is safe).
   */
  shown?: (sessionId: string, event: StoredEvent) => void;
  /**
   * Keeps the actor of a session just created here (see `DormantActors`): its first use (the
   * client's attach, its first input) needs no read. With several nodes, as if let go with no
   * lease taken yet.
   */
  adopt: (data: SessionData) => void;
  /** A single node's runs on the store (see `SeqEpoch`); none with several nodes. */
  epoch?: SeqEpoch;
  /** Starts listening to the other nodes; on a single node, marks the run begun. */
  open(): Promise<void>;
  /**
   * With leases, runs `recover` every lease timeout: it ends the replies of nodes that stopped
   * renewing their leases (they died), as a restart would.
   */
  sweep(recover: () => Promise<unknown>): void;
  /** Stops sweeping, renewing and listening; the streams following sessions end with `error`. */
  stop(error: Error): Promise<void>;
}

/**
 * How long at most an actor let go idle keeps its session's lease (`LingeringActors`; a quarter of
 * the lease's timeout when that is shorter): an input within it needs no write to take the lease
 * back; another node's input meanwhile is forwarded here.
 */
const LINGER_MS = 1000;

/** The token a session's lease is left with before any node took it: no lease record. */
const NO_LEASE = 0;

/** How many actors of sessions created and not used yet a single node keeps, the oldest going first. */
const CREATED_LIMIT = 256;

/** What several nodes on one database share besides the store. */
export interface ClusterOptions extends LeaseOptions {
  /** The other nodes; none by default. */
  signals?: StoreSignals | undefined;
  reader: SessionReader;
  /** Applies an input on this node (see `Inbox`). */
  applyHere: ApplyHere;
}

/** How a node makes its actors: read from the store, or from a record it has just written. */
export interface ActorSource {
  /** Reads a session from the store and makes its actor (see `loadActor`). */
  load: (sessionId: string, lease?: Lease) => Promise<SessionActor>;
  /** The actor of a session as stored, with no reply (see `actorOf`). */
  make: (data: SessionData) => SessionActor;
}

/**
 * This node's session actors, loaded with `load`. With `cluster` (several nodes on one database) an
 * actor is loaded only once its session's lease is taken, so the session is read after every write
 * of the node that held it before; the lease goes with the actor when it leaves memory, and an actor
 * whose lease went to another node is dropped. An actor let go is kept (`DormantActors`) and used
 * again when the lease comes back to this node as it left it, no other node having held it. While
 * it holds a session, the node applies the inputs other nodes forward to it (its inbox). Streams
 * follow sessions through the store instead of holding their actors, so a node holds a session's
 * lease only while it runs its reply or applies an input.
 */
export function nodeActors(
  store: Store,
  log: Logger,
  cluster: ClusterOptions | undefined,
  { load, make }: ActorSource,
): NodeActors {
  // The record as a read would return it (its schema's defaults filled in).
  const fromRecord = (data: SessionData) => make(SessionRecord.schema.parse(data));
  if (!cluster) {
    // Every write to a session goes through its actor here, so the actor of a session created
    // here is what a read would make of it until its first use takes it.
    const created = new DormantActors(CREATED_LIMIT);
    const actors = new ActorRegistry((id) => {
      // Once the store failed, read: the actors in memory have failed with it.
      const kept = store.failure ? undefined : created.take(id);
      return kept ? Promise.resolve(kept.actor) : load(id);
    });
    const epoch = new SeqEpoch(store);
    return {
      actors,
      epoch,
      adopt: (data) => created.keep(fromRecord(data), NO_LEASE),
      open: () => epoch.begin(),
      sweep: () => undefined,
      stop: () => epoch.end(),
    };
  }
  const { reader, applyHere, ...leaseOptions } = cluster;
  const remote = cluster.signals ?? new SignalBus().node();
  // This node's listeners hear its own signals at once, and the other nodes' through `remote`.
  const local = new Listeners();
  const signals: StoreSignals = {
    open: () => remote.open(),
    signal(topic) {
      local.call(topic);
      remote.signal(topic);
    },
    watch(topic, listener) {
      const stops = [local.add(topic, listener), remote.watch(topic, listener)];
      return () => stops.forEach((stop) => stop());
    },
    close: () => remote.close(),
  };
  const leases = new SessionLeases(store, log, {
    ...leaseOptions,
    onLost(id) {
      actors.drop(actors.cached(id));
      const lost = lingering.take(id);
      if (lost) void letGo(lost, false);
    },
  });
  const pollMs = Math.min(1000, Math.max(20, leaseOptions.timeoutMs / 4));
  const inbox = new Inbox(
    { store, signals, log, nodeId: leases.nodeId, pollMs, timeoutMs: 4 * leaseOptions.timeoutMs },
    applyHere,
  );
  // Followers hear the other nodes' writes; this node's come to them with their events.
  const followers = new SessionFollowers({ store, reader, signals: remote, pollMs: 2 * pollMs });
  const inboxWatches = new Map<SessionActor, () => void>();
  const dormant = new DormantActors();
  // An actor left memory: let go idle (kept, see `DormantActors`), or dropped; its lease released.
  const letGo = (actor: SessionActor, idle: boolean): Promise<void> => {
    inboxWatches.get(actor)?.();
    inboxWatches.delete(actor);
    if (!actor.lease) return Promise.resolve();
    // Let go idle, never stopped: a stopped actor is dropped (not idle) when it stops.
    if (idle) dormant.keep(actor, actor.lease.token);
    else dormant.forget(actor.id);
    // Let go idle, every event it showed is written; dropped, some may not be.
    return leases.release(actor.lease, idle);
  };
  const lingerMs = Math.min(LINGER_MS, leaseOptions.timeoutMs / 4);
  const lingering = new LingeringActors(lingerMs, (actor) => void letGo(actor, true));
  let stopping = false;
  const actors = new ActorRegistry(
    async (id) => {
      // Still holding the lease, renewed lately: nothing to write (its inbox is still watched).
      const still = lingering.take(id);
      if (still?.lease && leases.current(still.lease, leaseOptions.timeoutMs / 2)) return still;
      if (still) await letGo(still, true);
      const kept = dormant.take(id);
      const lease = (kept && (await leases.takeBack(id, kept.token))) ?? (await leases.acquire(id));
      try {
        const actor = kept && lease.previous === kept.token ? kept.actor : await load(id, lease);
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
    (actor, idle) => {
      if (idle && actor.lease && !stopping) lingering.keep(actor);
      else void letGo(actor, idle);
    },
  );
  let sweeper: NodeJS.Timeout | undefined;
  return {
    actors,
    leases,
    followers,
    inbox,
    signals,
    adopt: (data) => dormant.keep(fromRecord(data), NO_LEASE),
    published(sessionId, events) {
      followers.offer(sessionId, events);
      signals.signal(eventsTopic(sessionId));
    },
    shown: (sessionId, event) => followers.offer(sessionId, [event]),
    open: () => signals.open(),
    sweep(recover) {
      // A database out of reach fails a sweep, never the node; the next one tries again.
      const run = () =>
        void recover().catch((err: unknown) => log.warn({ err }, "recovery sweep failed"));
      sweeper = setInterval(run, leaseOptions.timeoutMs).unref();
    },
    async stop(error) {
      stopping = true;
      clearInterval(sweeper);
      await Promise.all(lingering.takeAll().map((actor) => letGo(actor, true)));
      dormant.clear();
      leases.close();
      followers.closeAll(error);
      await signals.close();
    },
  };
}
