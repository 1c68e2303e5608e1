import type { Store } from "../store/store.js";
import { RequestRecord } from "./records.js";

/**
 * The request ids a session remembers, kept in memory with its actor so that a new id, the usual
 * case, needs no read of the store. Once complete (a session that never had one, or its ids read
 * once when a second input of the same actor had to look one up), an id it lacks is new. An actor
 * loaded for one input and let go (no stream holds it) looks its id up as before, and reads no
 * more.
 *
 * It holds every id the store holds, and maybe some the store no longer does (forgotten while the
 * read ran, or past their time): those are looked up as before. Never fewer: an id is added when
 * its input is applied, before its write, so a read of the store that misses a write still in
 * flight misses nothing. Request records are written only by the session's actor (on several
 * nodes, the lease holder's), so nothing else adds to them while the actor lives.
 */
export class RequestIndex {
  /** Created on first use: most actors never hold an id. */
  private ids: Set<string> | undefined;
  private complete: boolean;
  private reading = false;
  /** How many ids were looked up in the store while incomplete. */
  private lookups = 0;

  /** `empty`: the session has never recorded a request id (its index starts complete). */
  constructor(empty: boolean) {
    this.complete = empty;
  }

  /** False only when the index is complete and lacks `requestId`: then the id is new. */
  mayHold(requestId: string): boolean {
    return !this.complete || this.ids?.has(requestId) === true;
  }

  /** An input recorded `requestId`, and its write forgets `forgotten`. */
  noted(requestId: string, forgotten: readonly string[]): void {
    const ids = (this.ids ??= new Set());
    ids.add(requestId);
    for (const id of forgotten) ids.delete(id);
  }

  /**
   * An id was looked up in the store. From the second, reads the session's request ids once, off
   * the input's path, to complete the index; a failed read leaves it incomplete.
   */
  lookedUp(store: Store, sessionId: string): void {
    if (this.complete || this.reading || ++this.lookups < 2) return;
    this.reading = true;
    const prefix = `${sessionId}/`;
    void (async () => {
      const found: string[] = [];
      for await (const key of store.keys(RequestRecord, { gte: prefix, lt: `${sessionId}0` })) {
        found.push(key.slice(prefix.length));
      }
      const ids = (this.ids ??= new Set());
      for (const id of found) ids.add(id);
      this.complete = true;
    })()
      .catch(() => undefined)
      .finally(() => (this.reading = false));
  }
}
