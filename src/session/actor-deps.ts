import type { Logger } from "../common/logger.js";
import type { Telemetry } from "../common/telemetry.js";
import type { Store } from "../store/store.js";
import type { Outbox } from "./notifications/outbox.js";
import type { RuleBook } from "./rule-book.js";
import type { SeqEpoch } from "./seq-epoch.js";
import type { SessionLeases } from "./session-leases.js";
import type { StoredEvent } from "./stored-event.js";

/** What every actor shares (`Actor`: the actor, see `SessionActor`). */
export interface ActorDeps<Actor> {
  store: Store;
  logger: Logger;
  rules: RuleBook;
  homeDir: string;
  /** Told about every parked call's deadline. */
  expiry?: { note(at: string): void };
  /** Keep the events of this many finished replies per session; undefined keeps all. */
  keepFinishedReplies?: number | undefined;
  /** Told when a write of the actor failed: its memory may be ahead of the store (not reused). */
  failed?: (actor: Actor) => void;
  /** Told when a reply stopped running: with no stream and no other use, the actor may leave. */
  idle?: (actor: Actor) => void;
  /** The session leases, when several nodes share the database. */
  leases?: SessionLeases;
  /** Told of the events stored, when several nodes share the database (see `NodeActors`). */
  published?: (sessionId: string, events: readonly StoredEvent[]) => void;
  /** Told of each event given to streams, stored or not, with several nodes (see `NodeActors`). */
  shown?: (sessionId: string, event: StoredEvent) => void;
  /** Where replies report their metrics and spans; default none. */
  telemetry?: Telemetry;
  /** Where park notifications are written; none when no receiver is configured. */
  outbox?: Outbox;
  /** The server's runs on this store: events may then reach streams before they are written. */
  epoch?: SeqEpoch;
}
