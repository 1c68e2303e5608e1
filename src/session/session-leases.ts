import { z } from "zod";
import { ParkwayError } from "../common/errors.js";
import { newId } from "../common/ids.js";
import type { Logger } from "../common/logger.js";
import { ConflictError } from "../store/storage-failure.js";
import { defineRecord } from "../store/record.js";
import type { Store, StoreBatch } from "../store/store.js";

/**
 * Which node serves a session, until when: key = session id. `token` grows with every new holder
 * (and never otherwise), so a write checked against it fails once the lease went to another node.
 */
export const LeaseRecord = defineRecord({
  kind: "lease",
  version: 1,
  schema: z.object({
    node: z.string(),
    token: z.number().int().min(1),
    /** ISO time after which another node may take the lease. */
    expiresAt: z.string(),
    /**
     * Set when the holder let the lease go with every event it had given to streams written (see
     * `release`); absent while it is held, and when it expired or went to another node.
     */
    clean: z.boolean().optional(),
  }),
});

/** A lease this node holds. */
export interface Lease {
  readonly sessionId: string;
  readonly token: number;
  /**
   * The token of the lease as it was read when this one was taken, when it was this node's own
   * (released or expired): no other node held the session in between.
   */
  readonly previous?: number;
  /**
   * The lease as it was read when this one was taken (none: no node ever held it): its holder's
   * token, and whether that holder let it go cleanly (`release` with `clean`).
   */
  readonly before?: { readonly token: number; readonly clean: boolean };
}

export interface LeaseOptions {
  /** How long a lease lasts without being renewed; it is renewed every third of that. */
  timeoutMs: number;
  /** This node's name in the leases; unique per process by default. */
  nodeId?: string;
  /** Told when a lease this node held went to another node (it was not renewed in time). */
  onLost?: (sessionId: string) => void;
}

/**
 * Session leases for several nodes on one database: a session is served (its actor loaded, its
 * replies run, its records written) by the one node whose lease is current. Taking a lease is a
 * compare-and-set on its record; every write of a session checks, in its own transaction, that
 * the lease is still this node's with the same token (`fence`), so a node that lost it (paused,
 * partitioned) cannot write. Leases are renewed while held and released when the session leaves
 * memory; one not renewed expires, and then any node takes it.
 *
 * A lease's writes are relaxed (`WriteOptions.relaxed`: in PostgreSQL they do not wait for the
 * flush of the database's log). A crash of the database may lose one: a lease taken or renewed
 * then reads as it was before, and the holder's next write is refused by its fence, as if the lease
 * had expired; a lost release expires on its own. Every write that matters is fenced and committed
 * durably, and that commit makes the lease writes before it durable too.
 */
export class SessionLeases {
  readonly nodeId: string;
  private readonly held = new Map<string, Lease>();
  /** When each held lease's last write (taken, renewed) was issued, on this process's clock. */
  private readonly confirmed = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly options: LeaseOptions,
  ) {
    this.nodeId = options.nodeId ?? newId("node");
    this.timer = setInterval(() => void this.renewAll(), Math.max(1, options.timeoutMs / 3));
    this.timer.unref();
  }

  /** How long a lease lasts without being renewed. */
  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  /**
   * Whether this node holds `lease`, taken or renewed within the last `withinMs` on its own clock:
   * a process paused longer (the lease may have expired and gone to another node meanwhile) checks
   * the lease in the store instead.
   */
  current(lease: Lease, withinMs: number): boolean {
    const at = this.confirmed.get(lease.sessionId);
    return (
      this.held.get(lease.sessionId) === lease &&
      at !== undefined &&
      performance.now() - at < withinMs
    );
  }

  /** How many leases this node holds. */
  get size(): number {
    return this.held.size;
  }

  /**
   * Takes the session's lease when it is free, expired or already this node's (a new token each
   * time). UNAVAILABLE when another node holds it. A race with another write of the lease (a
   * release under way, another node taking it) reads it again.
   */
  async acquire(sessionId: string): Promise<Lease> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.store.get(LeaseRecord, sessionId);
      const now = Date.now();
      if (current && current.node !== this.nodeId && Date.parse(current.expiresAt) > now) {
        throw new ParkwayError(
          "unavailable",
          `session ${sessionId} is being served by another node until ${current.expiresAt}; try again`,
          { reason: "SESSION_LEASED", metadata: { session_id: sessionId } },
        );
      }
      const token = (current?.token ?? 0) + 1;
      const issued = performance.now();
      try {
        await this.store
          .batch()
          .check(LeaseRecord, sessionId, (r) => r?.token === current?.token, "the lease as read")
          .put(LeaseRecord, sessionId, { node: this.nodeId, token, expiresAt: this.expiry(now) })
          .write({ relaxed: true });
      } catch (err) {
        if (err instanceof ConflictError && attempt < 3) continue;
        throw err;
      }
      const lease: Lease = {
        sessionId,
        token,
        ...(current?.node === this.nodeId ? { previous: current.token } : {}),
        ...(current ? { before: { token: current.token, clean: current.clean === true } } : {}),
      };
      this.hold(lease, issued);
      return lease;
    }
  }

  /**
   * Takes the lease back in one write when it is still as this node left it (its own, with
   * `token`; token 0: no lease was ever taken): no other node has held it since. Undefined when it
   * is not.
   */
  async takeBack(sessionId: string, token: number): Promise<Lease | undefined> {
    const next = token + 1;
    const issued = performance.now();
    const asLeft = (r: { node: string; token: number } | undefined) =>
      token === 0 ? r === undefined : this.holds(r, { token });
    try {
      await this.store
        .batch()
        .check(LeaseRecord, sessionId, asLeft, "the lease as left")
        .put(LeaseRecord, sessionId, {
          node: this.nodeId,
          token: next,
          expiresAt: this.expiry(Date.now()),
        })
        .write({ relaxed: true });
    } catch (err) {
      if (err instanceof ConflictError) return undefined;
      throw err;
    }
    const lease: Lease = { sessionId, token: next, previous: token };
    this.hold(lease, issued);
    return lease;
  }

  /** Makes `batch` apply only while `lease` is still this node's. */
  fence(batch: StoreBatch, lease: Lease): void {
    batch.check(LeaseRecord, lease.sessionId, (r) => this.holds(r, lease), "the session's lease");
  }

  /**
   * Lets the lease go (it expires at once, and keeps its token so that the next holder's is
   * greater), unless it already went to another node. `clean`: every event the holder gave to
   * streams is written, so the next holder need not skip past any (see `resumeUnder`).
   */
  async release(lease: Lease, clean = false): Promise<void> {
    if (this.held.get(lease.sessionId) === lease) this.forget(lease.sessionId);
    try {
      await this.store
        .batch()
        .check(LeaseRecord, lease.sessionId, (r) => this.holds(r, lease), "the session's lease")
        .put(LeaseRecord, lease.sessionId, {
          node: this.nodeId,
          token: lease.token,
          expiresAt: new Date(0).toISOString(),
          ...(clean ? { clean } : {}),
        })
        .write({ relaxed: true });
    } catch (err) {
      if (!(err instanceof ConflictError)) {
        this.log.warn({ err, session: lease.sessionId }, "could not release a session lease");
      }
    }
  }

  /** Stops renewing (the leases still held expire, or are released by their sessions). */
  close(): void {
    clearInterval(this.timer);
  }

  private hold(lease: Lease, issued: number): void {
    this.held.set(lease.sessionId, lease);
    this.confirmed.set(lease.sessionId, issued);
  }

  private forget(sessionId: string): void {
    this.held.delete(sessionId);
    this.confirmed.delete(sessionId);
  }

  private holds(
    record: { node: string; token: number } | undefined,
    lease: { token: number },
  ): boolean {
    return record?.node === this.nodeId && record.token === lease.token;
  }

  private expiry(now: number): string {
    return new Date(now + this.options.timeoutMs).toISOString();
  }

  private async renewAll(): Promise<void> {
    for (const lease of [...this.held.values()]) {
      if (this.held.get(lease.sessionId) !== lease) continue;
      const issued = performance.now();
      try {
        await this.store
          .batch()
          .check(LeaseRecord, lease.sessionId, (r) => this.holds(r, lease), "the session's lease")
          .put(LeaseRecord, lease.sessionId, {
            node: this.nodeId,
            token: lease.token,
            expiresAt: this.expiry(Date.now()),
          })
          .write({ relaxed: true });
        if (this.held.get(lease.sessionId) === lease) this.confirmed.set(lease.sessionId, issued);
      } catch (err) {
        if (this.held.get(lease.sessionId) !== lease) continue;
        if (err instanceof ConflictError) {
          this.forget(lease.sessionId);
          this.log.warn({ session: lease.sessionId }, "session lease lost to another node");
          this.options.onLost?.(lease.sessionId);
        } else {
          // A failed store stops the server; a closed one is a shutdown.
          return;
        }
      }
    }
  }
}
