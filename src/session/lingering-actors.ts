import type { SessionActor } from "./session-actor.js";

/**
 * With several nodes, the actors this node let go idle that still hold their session's lease for a
 * while (`ms`), so that an input that follows soon (the next message of a client driving the
 * session, an answer given at once) finds the session here with no write to take the lease back.
 * Each is let go (`letGo`: its lease released) once its time is up, unless taken back before.
 */
export class LingeringActors {
  private readonly kept = new Map<string, { actor: SessionActor; timer: NodeJS.Timeout }>();

  constructor(
    private readonly ms: number,
    private readonly letGo: (actor: SessionActor) => void,
  ) {}

  /** Keeps `actor` with its lease until its time is up (another of its session's is let go). */
  keep(actor: SessionActor): void {
    const earlier = this.take(actor.id);
    if (earlier && earlier !== actor) this.letGo(earlier);
    const timer = setTimeout(() => {
      if (this.kept.get(actor.id)?.actor !== actor) return;
      this.kept.delete(actor.id);
      this.letGo(actor);
    }, this.ms);
    timer.unref();
    this.kept.set(actor.id, { actor, timer });
  }

  /** The session's lingering actor, no longer kept here; undefined when there is none. */
  take(sessionId: string): SessionActor | undefined {
    const entry = this.kept.get(sessionId);
    if (!entry) return undefined;
    clearTimeout(entry.timer);
    this.kept.delete(sessionId);
    return entry.actor;
  }

  /** Every lingering actor, no longer kept here. */
  takeAll(): SessionActor[] {
    return [...this.kept.keys()].map((id) => this.take(id)!);
  }
}
