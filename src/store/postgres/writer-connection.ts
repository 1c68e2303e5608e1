import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import { GroupWriter } from "./writer.js";

/** How long a write waits, by default, for a connection to replace one the database ended. */
export const DEFAULT_RECONNECT_MS = 30_000;

/** The first wait between two attempts to connect again; it doubles up to `MAX_RETRY_WAIT_MS`. */
const FIRST_RETRY_WAIT_MS = 50;
const MAX_RETRY_WAIT_MS = 1000;

/**
 * The connection every write goes through, in order. One the database ended while no write was on
 * it (a restart, a failover, a terminated backend: the client was told before the next write) is
 * replaced before the next write, which nothing was sent of and so is written on the new one. A
 * connection is tried again for up to `reconnectMs` while the database comes back; past that, the
 * write fails as any other. A connection lost while a write is on it fails that write (its outcome
 * is unknown): that is for the store to handle.
 */
export class WriterConnection {
  private client: pg.PoolClient | undefined;
  private writer: GroupWriter | undefined;
  /** The database ended `client`'s connection (or it failed) since it was adopted. */
  private ended = false;

  constructor(
    private readonly pool: pg.Pool,
    /** Prepares a new connection for writing (its `application_name`). */
    private readonly setup: (client: pg.PoolClient) => Promise<unknown>,
    private readonly reconnectMs = DEFAULT_RECONNECT_MS,
  ) {}

  /** Takes `client`, already set up, as the writer's connection. */
  adopt(client: pg.PoolClient): void {
    const lost = () => {
      if (this.client === client) this.ended = true;
    };
    // An error on an idle connection must not crash the process; the next write replaces it.
    client.on("error", lost);
    client.on("end", lost);
    this.client = client;
    this.writer = new GroupWriter(client);
    this.ended = false;
  }

  /** The writer for the next write: on a new connection if the database ended the last one. */
  async current(): Promise<GroupWriter> {
    if (this.writer && !this.ended) return this.writer;
    this.release(true);
    const deadline = Date.now() + this.reconnectMs;
    for (let wait = FIRST_RETRY_WAIT_MS; ; wait = Math.min(wait * 2, MAX_RETRY_WAIT_MS)) {
      try {
        const client = await this.pool.connect();
        try {
          await this.setup(client);
        } catch (err) {
          client.release(true);
          throw err;
        }
        this.adopt(client);
        return this.writer!;
      } catch (err) {
        if (Date.now() + wait > deadline) throw err;
        await sleep(wait);
      }
    }
  }

  /** Gives the connection back to the pool (`destroy`: closes it). */
  release(destroy: boolean): void {
    const client = this.client;
    this.client = undefined;
    this.writer = undefined;
    client?.release(destroy || this.ended);
  }
}
