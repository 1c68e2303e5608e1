/**
 * The PostgreSQL store's own limits, from a bare node-postgres client on the database Parkway uses:
 * a synced INSERT commit (one 1 KB row, `synchronous_commit = on`, one statement in autocommit: the
 * INSERT and its COMMIT in one round trip, the commit waiting for the WAL flush), the same as an
 * explicit `BEGIN; INSERT …; COMMIT` (three round trips), and a bare `SELECT 1` round trip.
 */
import pg from "pg";
import { nowUs } from "./stats.js";

const TABLE = "bench_synced_insert";

export class SyncedInserts {
  private readonly client: pg.Client;
  private readonly value: Buffer;

  constructor(url: string, bytes = 1024) {
    this.client = new pg.Client({ connectionString: url, application_name: "parkway-bench" });
    this.client.on("error", () => undefined);
    this.value = Buffer.alloc(bytes, 120);
  }

  async open(): Promise<void> {
    await this.client.connect();
    await this.client.query("SET synchronous_commit = on");
    const shown = await this.client.query<{ synchronous_commit: string }>(
      "SHOW synchronous_commit",
    );
    if (shown.rows[0]?.synchronous_commit !== "on") throw new Error("synchronous_commit is not on");
    await this.client.query(
      `CREATE TABLE IF NOT EXISTS ${TABLE} (id bigserial PRIMARY KEY, value bytea NOT NULL)`,
    );
  }

  /** `n` autocommit INSERTs of one row (INSERT and synced COMMIT in one round trip); µs each. */
  async commits(n: number): Promise<number[]> {
    const insert = { name: "bench-insert", text: `INSERT INTO ${TABLE} (value) VALUES ($1)` };
    return this.time(n, () => this.client.query({ ...insert, values: [this.value] }));
  }

  /** `n` explicit transactions `BEGIN; INSERT …; COMMIT` (three round trips); µs each. */
  async transactions(n: number): Promise<number[]> {
    const insert = { name: "bench-insert", text: `INSERT INTO ${TABLE} (value) VALUES ($1)` };
    return this.time(n, async () => {
      await this.client.query("BEGIN");
      await this.client.query({ ...insert, values: [this.value] });
      await this.client.query("COMMIT");
    });
  }

  /** `n` round trips of `SELECT 1` (no commit); µs each. */
  async roundTrips(n: number): Promise<number[]> {
    return this.time(n, () => this.client.query({ name: "bench-select", text: "SELECT 1" }));
  }

  private async time(n: number, work: () => Promise<unknown>): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = nowUs();
      await work();
      out.push(nowUs() - t0);
    }
    return out;
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}
