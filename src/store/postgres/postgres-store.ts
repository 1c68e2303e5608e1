import pg from "pg";
import { type BatchEncoding, buildBatch } from "../batch-builder.js";
import { decodeRecord, type RecordType } from "../record.js";
import { StorageFailure, StoreClosedError } from "../storage-failure.js";
import type { RangeOptions, Store, StoreBatch } from "../store.js";
import { redactDatabaseUrl } from "./database-url.js";
import { DatabaseOpenError, readFailure, SchemaTooNewError } from "./errors.js";
import { DEFAULT_PAGE_ROWS, digestRows, scanRows } from "./scan.js";
import { migrateSchema, RECORDS } from "./schema.js";
import { keyBytes, type Op, type QueuedWrite, type TransactionGuard } from "./writer.js";
import { WriterConnection } from "./writer-connection.js";
import { boundedWait } from "../../common/bounded-wait.js";

/** How a `PostgresStore` connects and reads. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database?…` */
  url: string;
  /** Connections at most: one is the writer's, the others serve reads. Default 4, at least 2. */
  poolSize?: number;
  /** Rows a scan reads per query (default 500). */
  pageRows?: number;
  /** `application_name` of the connections, as pg_stat_activity shows them (default "parkway"). */
  applicationName?: string;
  /** The database ends a transaction left open this long (a frozen node's), releasing its locks. */
  idleInTransactionTimeoutMs?: number;
  /**
   * How long a write waits for a new connection when the database ended the writer's while it was
   * idle (a restart, a failover), before the store fails (default 30 s).
   */
  reconnectMs?: number;
}

/** The `application_name` of the writer's connection: its name suffixed with " writer". */
export const WRITER_SUFFIX = " writer";

const GET = {
  name: "parkway-get",
  text: `SELECT value FROM ${RECORDS} WHERE kind = $1 AND key = $2`,
};
const GET_MANY = {
  name: "parkway-get-many",
  text: `SELECT key, value FROM ${RECORDS} WHERE kind = $1 AND key = ANY($2::bytea[])`,
};

/**
 * The PostgreSQL store: every record a row of one table (kind, key, value), the value as
 * `encodeRecord` made it; keys are stored as their UTF-8 bytes and sort bytewise, as in LevelDB.
 * The schema is versioned and created or migrated by `open` (see `migrateSchema`).
 * Writes go through one connection, in the order they were issued: the writes issued while one
 * transaction runs are joined into the next, which commits them all or none, with
 * `synchronous_commit` on whatever they asked (a crash of the database loses nothing committed,
 * so no seq a stream has seen is given again). A write's checks are made in its transaction (see
 * `GroupWriter`); a write refused by a check is left out of the transaction alone. A connection
 * the database ended while idle is replaced first (see `WriterConnection`). The first failed
 * transaction (the database unreachable, the connection lost under it, a disk full) stops the store
 * for writes: its outcome is unknown, and nothing may be written behind it. Reads use the other
 * connections of the pool and go on.
 */
export class PostgresStore implements Store {
  readonly location: string;
  private pool: pg.Pool | undefined;
  private writer: WriterConnection | undefined;
  private queue: QueuedWrite[] = [];
  /** The write loop, while it runs. */
  private writing: Promise<void> | undefined;
  private closed = false;
  /** `open` while it runs. */
  private opening: Promise<void> | undefined;
  private failed: StorageFailure | undefined;
  private readonly failureListeners: ((failure: StorageFailure) => void)[] = [];
  private readonly encoding: BatchEncoding<Op> = {
    put: (kind, key, value) => ({ type: "put", kind, key, value }),
    del: (kind, key) => ({ type: "del", kind, key }),
  };

  constructor(private readonly options: PostgresStoreOptions) {
    this.location = redactDatabaseUrl(options.url);
  }

  /**
   * Connects, then creates or migrates the schema under an advisory lock (one node at a time);
   * throws `SchemaTooNewError` when the database's schema is newer than this server, and
   * `DatabaseOpenError` naming PostgreSQL's problem when it cannot be reached or used. Idempotent.
   */
  open(): Promise<void> {
    if (this.pool && !this.closed) return Promise.resolve();
    this.opening ??= this.connect().finally(() => (this.opening = undefined));
    return this.opening;
  }

  private async connect(): Promise<void> {
    const applicationName = this.options.applicationName ?? "parkway";
    const pool = new pg.Pool({
      connectionString: this.options.url,
      max: Math.max(2, this.options.poolSize ?? 4),
      application_name: applicationName,
      // A database that does not answer fails the start (or a read) instead of holding it, and a
      // connection whose peer vanished is found by TCP keepalive.
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
      options: `-c idle_in_transaction_session_timeout=${this.options.idleInTransactionTimeoutMs ?? 0}`,
    });
    // A connection the database ends while idle must not crash the process: the pool drops it.
    pool.on("error", () => undefined);
    try {
      const client = await pool.connect().catch((err: unknown) => {
        throw new DatabaseOpenError(this.location, describe(err), err);
      });
      client.on("error", () => undefined);
      const nameWriter = (writing: pg.PoolClient) =>
        writing.query(
          `SET application_name = '${applicationName.replace(/'/g, "''")}${WRITER_SUFFIX}'`,
        );
      try {
        await migrateSchema(client, this.location).catch((err: unknown) => {
          if (err instanceof SchemaTooNewError || err instanceof DatabaseOpenError) throw err;
          throw new DatabaseOpenError(this.location, describe(err), err);
        });
        await nameWriter(client);
      } catch (err) {
        client.release(true);
        throw err;
      }
      this.writer = new WriterConnection(pool, nameWriter, this.options.reconnectMs);
      this.writer.adopt(client);
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    this.pool = pool;
    this.closed = false;
  }

  /** Refuses new writes, waits for those already issued, then closes every connection. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.writing) await this.writing;
    const pool = this.pool;
    if (!pool) return;
    this.pool = undefined;
    this.writer?.release(this.failed !== undefined);
    this.writer = undefined;
    // A connection whose peer vanished may never finish ending.
    const ended = pool.end().catch(() => undefined);
    await boundedWait(ended, 2000);
  }

  get failure(): StorageFailure | undefined {
    return this.failed;
  }

  onFailure(listener: (failure: StorageFailure) => void): void {
    if (this.failed) listener(this.failed);
    else this.failureListeners.push(listener);
  }

  batch(): StoreBatch {
    return this.guardedBatch([]);
  }

  /**
   * A batch whose transaction also runs `guards` (SQL conditions, see `TransactionGuard`) before
   * its operations: the seam for conditions a record check cannot express, such as a lease.
   */
  guardedBatch(guards: readonly TransactionGuard[]): StoreBatch {
    return buildBatch(this.encoding, (ops, checks, sync, relaxed) =>
      this.enqueue({ ops, checks, guards, sync, relaxed }),
    );
  }

  private enqueue(write: Omit<QueuedWrite, "resolve" | "reject">): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.closed || !this.pool) return Promise.reject(new StoreClosedError(this.location));
    const done = new Promise<void>((resolve, reject) =>
      this.queue.push({ ...write, resolve, reject }),
    );
    if (!this.writing) this.startWriting();
    return done;
  }

  private startWriting(): void {
    this.writing = this.writeQueued().finally(() => {
      this.writing = undefined;
      if (this.queue.length > 0) this.startWriting();
    });
  }

  /** Writes the queue in order, each time all that waits as one transaction, until it is empty. */
  private async writeQueued(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.queue;
      this.queue = [];
      const connection = this.writer;
      if (this.failed || !connection) {
        const refusal = this.failed ?? new StoreClosedError(this.location);
        for (const w of group) w.reject(refusal);
        continue;
      }
      let admitted: QueuedWrite[];
      try {
        admitted = await (await connection.current()).write(group);
      } catch (err) {
        const failure = this.fail(err);
        for (const w of group) w.reject(failure);
        continue;
      }
      for (const w of admitted) w.resolve();
    }
  }

  /** Records the first failure and tells the listeners; later writes are refused with it. */
  private fail(cause: unknown): StorageFailure {
    if (this.failed) return this.failed;
    const failure = new StorageFailure(this.location, cause);
    this.failed = failure;
    for (const listener of this.failureListeners.splice(0)) {
      try {
        listener(failure);
      } catch {
        // A listener's own failure must not hide the storage failure from the others.
      }
    }
    return failure;
  }

  private get reads(): pg.Pool {
    if (!this.pool) throw new StoreClosedError(this.location);
    return this.pool;
  }

  async get<T>(type: RecordType<T>, key: string): Promise<T | undefined> {
    const result = await this.reading(
      this.reads.query<{ value: string }>({ ...GET, values: [type.kind, keyBytes(key)] }),
    );
    const raw = result.rows[0]?.value;
    return raw === undefined ? undefined : decodeRecord(type, key, raw);
  }

  async getMany<T>(type: RecordType<T>, keys: readonly string[]): Promise<(T | undefined)[]> {
    if (keys.length === 0) return [];
    const bytes = keys.map(keyBytes);
    const result = await this.reading(
      this.reads.query<{ key: Buffer; value: string }>({ ...GET_MANY, values: [type.kind, bytes] }),
    );
    const found = new Map(result.rows.map((row) => [row.key.toString("latin1"), row.value]));
    return keys.map((key, i) => {
      const raw = found.get(bytes[i]!.toString("latin1"));
      return raw === undefined ? undefined : decodeRecord(type, key, raw);
    });
  }

  async *entries<T>(type: RecordType<T>, options: RangeOptions = {}): AsyncIterable<[string, T]> {
    const rows = scanRows(this.reads, type.kind, options, true, this.pageRows);
    for await (const { key, value } of this.readingAll(rows)) {
      yield [key, decodeRecord(type, key, value)];
    }
  }

  async *keys<T>(type: RecordType<T>, options: RangeOptions = {}): AsyncIterable<string> {
    const rows = scanRows(this.reads, type.kind, options, false, this.pageRows);
    for await (const { key } of this.readingAll(rows)) yield key;
  }

  private get pageRows(): number {
    return Math.max(1, this.options.pageRows ?? DEFAULT_PAGE_ROWS);
  }

  digest(): Promise<string> {
    return this.reading(digestRows(this.reads, this.pageRows));
  }

  /** A read's failure as the caller should see it: the database out of reach is UNAVAILABLE. */
  private async reading<R>(read: Promise<R>): Promise<R> {
    try {
      return await read;
    } catch (err) {
      throw readFailure(this.location, err);
    }
  }

  private async *readingAll<R>(rows: AsyncIterable<R>): AsyncIterable<R> {
    try {
      yield* rows;
    } catch (err) {
      throw readFailure(this.location, err);
    }
  }
}

/** PostgreSQL's (or the network's) words for why a connection or query failed. */
function describe(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && code !== "" ? `${message} (${code})` : message;
}

/** Creates the PostgreSQL store for a database URL (see `PostgresStore`). */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  return new PostgresStore(options);
}
