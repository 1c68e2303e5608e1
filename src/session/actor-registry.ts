import { notFound } from "../common/errors.js";
import type { SessionActor } from "./session-actor.js";

/**
 * The session actors in memory: at most one per session, loaded on first use, and let go as soon
 * as nothing needs it — no attached stream, no running reply, no scoped use (`withActor`), no
 * write of its own still to land (else the session would be read again from a store behind it).
 */
export class ActorRegistry {
  private readonly actors = new Map<string, SessionActor>();
  /** Actors dropped after a failed write, until their reply has stopped. */
  private readonly dropped = new Set<SessionActor>();
  private readonly loading = new Map<string, Promise<SessionActor>>();
  /** How many scoped uses each actor in memory has under way. */
  private readonly uses = new Map<SessionActor, number>();
  /** The actors that may be running a reply: every one that is, and some that were. */
  private readonly replying = new Set<SessionActor>();

  /**
   * `load` reads a session from the store and makes its actor; `left` is told when an actor has
   * left memory: let go because nothing needed it (`idle`), or dropped or forgotten.
   */
  constructor(
    private readonly load: (sessionId: string) => Promise<SessionActor>,
    private readonly left: (actor: SessionActor, idle: boolean) => void = () => undefined,
  ) {}

  /** How many actors are in memory (attached, running, in use, or not yet released). */
  get size(): number {
    return this.actors.size;
  }

  /** The session's actor when it is in memory. */
  cached(sessionId: string): SessionActor | undefined {
    return this.actors.get(sessionId);
  }

  /**
   * How many replies are running: counted over the actors that were running when a use of them
   * ended (a reply starts or resumes only in a use: an input, an expiry), not over every actor in
   * memory (an input would cost as much as the streams attached).
   */
  running(): number {
    let n = 0;
    for (const actor of this.replying) {
      if (actor.running && this.actors.get(actor.id) === actor) n++;
      else this.replying.delete(actor);
    }
    return n;
  }

  /** Every actor in memory. */
  all(): SessionActor[] {
    return [...this.actors.values()];
  }

  /**
   * The session's actor, loaded when not in memory, with one use held for the caller (`giveBack`
   * returns it). NOT_FOUND when the session belongs to another tenant (undefined `tenant`: any,
   * for the server's own work).
   */
  async acquire(sessionId: string, tenant?: string): Promise<SessionActor> {
    for (;;) {
      const actor = await this.loaded(sessionId);
      // Released while this caller waited: load again, never use an actor no longer in memory.
      if (this.actors.get(sessionId) !== actor) continue;
      if (tenant !== undefined && actor.tenant !== tenant) {
        this.release(actor);
        throw notFound("session", sessionId);
      }
      this.uses.set(actor, (this.uses.get(actor) ?? 0) + 1);
      return actor;
    }
  }

  /**
   * Gives back a use taken by `acquire`, noting a reply the use left running (see `running`), and
   * lets the actor go if nothing needs it.
   */
  giveBack(actor: SessionActor): void {
    if (actor.running) this.replying.add(actor);
    const left = (this.uses.get(actor) ?? 1) - 1;
    if (left > 0) this.uses.set(actor, left);
    else this.uses.delete(actor);
    this.release(actor);
  }

  /**
   * Runs `fn` with the session's actor and lets the actor leave memory afterwards, however `fn`
   * ends, unless a stream, a running reply or another use still needs it.
   */
  withActor<T>(
    sessionId: string,
    tenant: string | undefined,
    fn: (actor: SessionActor) => Promise<T>,
  ): Promise<T> {
    const cached = this.actors.get(sessionId);
    if (cached && (tenant === undefined || cached.tenant === tenant)) {
      // In memory (the usual case): used at once, not a turn of the event loop later.
      this.uses.set(cached, (this.uses.get(cached) ?? 0) + 1);
      return this.using(cached, fn);
    }
    return this.acquire(sessionId, tenant).then((actor) => this.using(actor, fn));
  }

  /** Runs `fn` with a use of `actor` taken, and gives it back however `fn` ends. */
  private async using<T>(actor: SessionActor, fn: (actor: SessionActor) => Promise<T>) {
    try {
      return await fn(actor);
    } finally {
      this.giveBack(actor);
    }
  }

  /** Lets an actor leave memory when nothing uses it. */
  release(actor: SessionActor): void {
    if (actor.evictable && !this.uses.has(actor) && this.actors.get(actor.id) === actor) {
      this.actors.delete(actor.id);
      this.left(actor, true);
    }
  }

  /** Forgets an actor whose write failed; `stopAll` still waits for its reply to end. */
  drop(actor: SessionActor | undefined): void {
    if (!actor) return;
    if (this.actors.get(actor.id) === actor) this.actors.delete(actor.id);
    this.dropped.add(actor);
    void actor.stop().finally(() => {
      this.dropped.delete(actor);
      this.left(actor, false);
    });
  }

  /** Forgets a deleted session's actor at once, whatever its uses. */
  forget(sessionId: string, actor: SessionActor | undefined): void {
    if (actor) this.uses.delete(actor);
    this.actors.delete(sessionId);
    if (actor) this.left(actor, false);
  }

  /**
   * Stops every actor for a shutdown (see `SessionActor.stop`), after the inputs already being
   * applied to it; resolves once their writes are done.
   */
  async stopAll(graceMs: number): Promise<void> {
    await Promise.allSettled([...this.loading.values()]);
    await Promise.all([
      ...[...this.actors.values()].map((actor) => actor.serial(() => actor.stop(graceMs))),
      ...[...this.dropped].map((actor) => actor.stop()),
    ]);
  }

  private loaded(sessionId: string): Promise<SessionActor> {
    const cached = this.actors.get(sessionId);
    if (cached) return Promise.resolve(cached);
    let loading = this.loading.get(sessionId);
    if (!loading) {
      loading = this.load(sessionId)
        .then((actor) => {
          this.actors.set(sessionId, actor);
          return actor;
        })
        .finally(() => this.loading.delete(sessionId));
      this.loading.set(sessionId, loading);
    }
    return loading;
  }
}
