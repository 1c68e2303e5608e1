import pg from "pg";
import { newId } from "../../common/ids.js";
import type { Logger } from "../../common/logger.js";
import { Listeners, type StoreSignals } from "../signals.js";
import { boundedWait } from "../../common/bounded-wait.js";

/** The PostgreSQL channel of Parkway's signals. */
const CHANNEL = "parkway_signals";
/** Waits between attempts to listen again after the connection was lost. */
const RETRY_MS = [100, 500, 1000, 2000, 5000];

/**
 * Signals between the nodes of one database, by LISTEN/NOTIFY on one connection of its own: a
 * signal is sent to the other nodes as a notification (`<origin> <topic>`, its own ignored on
 * return; the signals of one turn of the event loop go out in one statement, one statement at a
 * time: those signalled while one is sent go out together after it). When the connection
 * is lost it connects again (backing off) and then calls every listener, since notifications sent
 * meanwhile are lost.
 */
export class PgSignals implements StoreSignals {
  private readonly local = new Listeners();
  private readonly origin = newId("n");
  private client: pg.Client | undefined;
  private outgoing = new Set<string>();
  private flushing: NodeJS.Immediate | undefined;
  /** The connection a NOTIFY statement is in flight on (a `pg` client takes one query at a time). */
  private sendingOn: pg.Client | undefined;
  private closed = false;
  private failures = 0;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly log: Logger,
    private readonly applicationName = "parkway signals",
  ) {}

  /** Connects and listens; rejects when the database cannot be reached. */
  async open(): Promise<void> {
    await this.connect();
  }

  signal(topic: string): void {
    if (this.closed) return;
    this.outgoing.add(topic);
    this.flushing ??= setImmediate(() => this.flush());
  }

  watch(topic: string, listener: () => void): () => void {
    return this.local.add(topic, listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    if (this.flushing) clearImmediate(this.flushing);
    this.local.clear();
    // A connection whose peer vanished may never finish ending: wait a second at most.
    const ended = this.client?.end().catch(() => undefined);
    await boundedWait(ended, 1000);
    this.client = undefined;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.url,
      application_name: this.applicationName,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
    });
    client.on("error", () => undefined);
    client.on("end", () => this.lost(client));
    client.on("notification", (n) => this.received(n.payload));
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.client = client;
    this.failures = 0;
  }

  private received(payload: string | undefined): void {
    if (!payload) return;
    const space = payload.indexOf(" ");
    if (space < 0 || payload.slice(0, space) === this.origin) return;
    this.local.call(payload.slice(space + 1));
  }

  private flush(): void {
    this.flushing = undefined;
    const client = this.client;
    // Only one statement per connection; one in flight on a lost connection holds nothing back.
    if (this.outgoing.size === 0 || (client && this.sendingOn === client)) return;
    const topics = [...this.outgoing].map((t) => `${this.origin} ${t}`);
    this.outgoing = new Set();
    // A signal lost with the connection is made up for by the listeners' own reads.
    if (!client) return;
    this.sendingOn = client;
    client
      .query(`SELECT pg_notify('${CHANNEL}', t) FROM unnest($1::text[]) AS t`, [topics])
      .catch(() => undefined)
      .finally(() => {
        if (this.sendingOn === client) this.sendingOn = undefined;
        if (!this.closed) this.flush();
      });
  }

  private lost(client: pg.Client): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    this.reconnect();
  }

  private reconnect(): void {
    const wait = RETRY_MS[Math.min(this.failures, RETRY_MS.length - 1)]!;
    this.failures++;
    this.retry = setTimeout(() => {
      if (this.closed) return;
      this.connect()
        .then(() => this.local.callAll())
        .catch((err: unknown) => {
          this.log.warn({ err }, "could not listen for signals from the other nodes; retrying");
          this.reconnect();
        });
    }, wait);
    this.retry.unref();
  }
}
