import type { SessionActor } from "./session-actor.js";

/** How many let-go actors a node keeps by default. */
const DEFAULT_LIMIT = 512;

/**
 * Actors out of the registry, kept so that their session's next use need not read it: on a single
 * node, those of the sessions it has just created (token 0); with several nodes, also those it let
 * go with their leases. A session's records are written only by the holder of its lease, and every
 * new holder takes a greater token: when this node takes the lease again and finds it as it left
 * it (its own, with the token it released), no other node has held it since, so the store holds
 * what the kept actor holds. Any other lease means another node may have written: the kept actor
 * is forgotten and the session read again. Only an actor let go because nothing needed it is kept,
 * never one dropped after a failed write or a deleted session's. The least recently kept go first
 * past `limit`.
 */
export class DormantActors {
  private readonly kept = new Map<string, { actor: SessionActor; token: number }>();

  constructor(private readonly limit = DEFAULT_LIMIT) {}

  /** Keeps an actor let go with the lease of `token` (being released; 0: none was taken). */
  keep(actor: SessionActor, token: number): void {
    this.kept.delete(actor.id);
    this.kept.set(actor.id, { actor, token });
    if (this.kept.size > this.limit) {
      const oldest = this.kept.keys().next().value;
      if (oldest !== undefined) this.kept.delete(oldest);
    }
  }

  /** The actor kept for the session, with the token of the lease it was let go with; forgotten. */
  take(sessionId: string): { actor: SessionActor; token: number } | undefined {
    const entry = this.kept.get(sessionId);
    this.kept.delete(sessionId);
    return entry;
  }

  /** Forgets the session's kept actor. */
  forget(sessionId: string): void {
    this.kept.delete(sessionId);
  }

  /** Forgets every kept actor. */
  clear(): void {
    this.kept.clear();
  }
}
