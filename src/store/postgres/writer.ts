import type { PoolClient } from "pg";
import { type BatchCheck, firstConflict } from "../batch-builder.js";
import type { ConflictError } from "../storage-failure.js";
import { CheckedValues } from "./checked-values.js";
import { READ_CHECKED, WRITE, WRITE_EXPECTING } from "./write-statements.js";

/** A put (of a value already encoded and validated) or a delete of one record. */
export type Op =
  | { type: "put"; kind: string; key: string; value: string }
  | { type: "del"; kind: string; key: string };

/** A way to run SQL inside the transaction of a write. */
export interface Transaction {
  query<R extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: R[] }>;
}

/**
 * A condition of a write evaluated by SQL in the write's own transaction, before its operations and
 * after the writes issued before it (e.g. "this node still holds the session's lease, with this
 * fencing token"). Resolves with a `ConflictError` to refuse the write (nothing of it is written,
 * the others of its transaction are), or undefined when it holds. It must not throw: a failed query
 * aborts the transaction, so a guard that throws (for any reason) fails the store like any failed
 * write. Rows it reads `FOR UPDATE` or `FOR SHARE` stay locked until the transaction ends.
 */
export type TransactionGuard = (tx: Transaction) => Promise<ConflictError | undefined>;

/** A write waiting for its turn. */
export interface QueuedWrite {
  ops: Op[];
  checks: readonly BatchCheck[];
  guards: readonly TransactionGuard[];
  sync: boolean;
  /** May be lost by a crash of the database (see `WriteOptions.relaxed`). */
  relaxed: boolean;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** A key as it is stored: its UTF-8 bytes. */
export const keyBytes = (key: string): Buffer => Buffer.from(key, "utf8");

/**
 * A record's identity as stored: two strings with the same UTF-8 bytes (a lone surrogate is encoded
 * as U+FFFD) are one key, as in the database.
 */
const at = (kind: string, key: string | Buffer) =>
  `${kind}\0${(typeof key === "string" ? keyBytes(key) : key).toString("latin1")}`;

/** Each key's last operation among `writes`, by `at(kind, key)`. */
function lastOps(writes: readonly QueuedWrite[]): Map<string, Op> {
  const last = new Map<string, Op>();
  for (const w of writes) for (const op of w.ops) last.set(at(op.kind, op.key), op);
  return last;
}

/** Thrown by a read of a record the writer does not know (see `GroupWriter.applyExpected`). */
const NOT_KNOWN = new Error("not known");

/**
 * The records as the writes admitted so far in a group leave them (`undefined`: deleted), over what
 * `base` reads: what each next write's checks see.
 */
class Ahead {
  private readonly values = new Map<string, string | undefined>();

  constructor(
    private readonly base: (id: string, kind: string, key: string) => string | undefined,
  ) {}

  read = (kind: string, key: string): string | undefined => {
    const id = at(kind, key);
    return this.values.has(id) ? this.values.get(id) : this.base(id, kind, key);
  };

  admit(write: QueuedWrite): void {
    for (const op of write.ops) {
      this.values.set(at(op.kind, op.key), op.type === "put" ? op.value : undefined);
    }
  }
}

/** The parameters of `WRITE` for `ops`: the deletes' kinds and keys, the puts' kinds, keys, values. */
function writeValues(ops: Iterable<Op>): unknown[] {
  const dels: [string[], Buffer[]] = [[], []];
  const puts: [string[], Buffer[], string[]] = [[], [], []];
  for (const op of ops) {
    if (op.type === "del") {
      dels[0].push(op.kind);
      dels[1].push(keyBytes(op.key));
    } else {
      puts[0].push(op.kind);
      puts[1].push(keyBytes(op.key));
      puts[2].push(op.value);
    }
  }
  return [...dels, ...puts];
}

/**
 * Writes groups of queued writes on one connection, one group after another, each in one
 * transaction, committed with `synchronous_commit` on (whether or not a write asked for `sync`),
 * except a conditional group of relaxed writes only (leases), committed with it off. A group
 * without checks or guards is a single statement. A group with checks, whose checked records all
 * hold the values the writer last saw (`CheckedValues`) and pass every check with them, is a single
 * statement too, made only if the database still holds those values. Any other (and one whose
 * values turned out stale) reads the checked records `FOR UPDATE` in a transaction, runs the guards,
 * leaves out the writes that are refused (rejected with their `ConflictError`, or what their check
 * threw), and writes the others. Throws when the database failed; the caller then rejects the whole
 * group.
 */
export class GroupWriter {
  /** The connection's `synchronous_commit`, once set. */
  private syncMode: boolean | undefined;
  /** The connection, as guards see it. */
  private readonly tx: Transaction;
  private readonly checked = new CheckedValues();

  constructor(private readonly client: PoolClient) {
    this.tx = {
      query: async <R extends Record<string, unknown>>(text: string, values?: unknown[]) =>
        client.query<R>(text, values),
    };
  }

  async write(group: QueuedWrite[]): Promise<QueuedWrite[]> {
    try {
      return await this.commit(group);
    } catch (err) {
      this.checked.clear();
      throw err;
    }
  }

  private async commit(group: QueuedWrite[]): Promise<QueuedWrite[]> {
    // Every transaction is durable when it commits, asked for `sync` or not: the database is a
    // process of its own, and one that crashes must not lose what streams have already shown.
    if (this.syncMode !== true) {
      await this.client.query("SET synchronous_commit = on");
      this.syncMode = true;
    }
    const conditional = group.some((w) => w.checks.length > 0 || w.guards.length > 0);
    if (!conditional) {
      await this.apply(group);
      return group;
    }
    // A relaxed commit does not wait for the WAL's flush; the next synced commit flushes it too.
    const relaxed = group.every((w) => w.relaxed);
    if (await this.applyExpected(group, relaxed)) return group;
    await this.client.query(relaxed ? "BEGIN; SET LOCAL synchronous_commit TO OFF" : "BEGIN");
    try {
      const admitted = await this.admit(group);
      if (admitted.some((w) => w.ops.length > 0)) await this.apply(admitted);
      await this.client.query("COMMIT");
      return admitted;
    } catch (err) {
      await this.client.query("ROLLBACK").catch(() => undefined);
      throw err;
    }
  }

  /** The operations of `writes`, each key's last one, in one statement. */
  private async apply(writes: readonly QueuedWrite[]): Promise<void> {
    const last = lastOps(writes);
    if (last.size === 0) return;
    await this.client.query({ ...WRITE, values: writeValues(last.values()) });
    this.wrote(last);
  }

  /**
   * Writes `group` whole in one statement when every record its checks look at is known
   * (`CheckedValues`), and every check holds with those values and the writes ahead of it in the
   * group; the statement verifies that the database still holds them. False when the group needs
   * the long way: guards, a record not known, a check that does not hold (or throws), or a value
   * that changed meanwhile (nothing was written then).
   */
  private async applyExpected(group: QueuedWrite[], relaxed: boolean): Promise<boolean> {
    if (group.some((w) => w.guards.length > 0)) return false;
    const expected = new Map<string, { kind: string; key: string; value: string | null }>();
    // A record not known stops the checks before any is run with a value it does not hold.
    const ahead = new Ahead((id, kind, key) => {
      const value = this.checked.get(id);
      if (value === undefined) throw NOT_KNOWN;
      expected.set(id, { kind, key, value });
      return value ?? undefined;
    });
    for (const w of group) {
      try {
        if (firstConflict(w.checks, ahead.read)) return false;
      } catch {
        return false; // NOT_KNOWN, or what a check threw: the long way tells
      }
      ahead.admit(w);
    }
    const last = lastOps(group);
    const checks: [string[], Buffer[], (string | null)[]] = [[], [], []];
    for (const e of expected.values()) {
      checks[0].push(e.kind);
      checks[1].push(keyBytes(e.key));
      checks[2].push(e.value);
    }
    const result = await this.client.query<{ ok: boolean }>({
      ...WRITE_EXPECTING,
      values: [...writeValues(last.values()), ...checks, relaxed ? "off" : "on"],
    });
    if (result.rows[0]?.ok !== true) return false;
    this.wrote(last);
    return true;
  }

  /** Keeps the known values of checked records up to date with committed operations. */
  private wrote(ops: ReadonlyMap<string, Op>): void {
    for (const [id, op] of ops) this.checked.wrote(id, op.type === "put" ? op.value : undefined);
  }

  /**
   * The writes of `group` whose guards and checks hold, in order. Each write's checks see the
   * database as the transactions before left it, overlaid with the operations of the writes
   * admitted ahead of it in this group (written together at the end).
   */
  private async admit(group: QueuedWrite[]): Promise<QueuedWrite[]> {
    const stored = await this.readChecked(group);
    const ahead = new Ahead((id) => stored.get(id));
    const admitted: QueuedWrite[] = [];
    for (const w of group) {
      let refused: unknown;
      for (const guard of w.guards) {
        refused = await guard(this.tx);
        if (refused) break;
      }
      if (!refused) {
        try {
          refused = firstConflict(w.checks, ahead.read);
        } catch (err) {
          refused = err ?? new Error("check failed");
        }
      }
      if (refused) {
        w.reject(refused);
        continue;
      }
      ahead.admit(w);
      admitted.push(w);
    }
    return admitted;
  }

  /**
   * The stored values of every record a check of `group` reads, locked for this transaction; each
   * is remembered (`CheckedValues`) as what the writes that follow will expect.
   */
  private async readChecked(group: QueuedWrite[]): Promise<Map<string, string>> {
    const kinds: string[] = [];
    const keys: Buffer[] = [];
    for (const w of group) {
      for (const c of w.checks) {
        kinds.push(c.kind);
        keys.push(keyBytes(c.key));
      }
    }
    const stored = new Map<string, string>();
    if (kinds.length === 0) return stored;
    const result = await this.client.query<{ kind: string; key: Buffer; value: string }>({
      ...READ_CHECKED,
      values: [kinds, keys],
    });
    for (const row of result.rows) stored.set(at(row.kind, row.key), row.value);
    for (let i = 0; i < kinds.length; i++) {
      const id = at(kinds[i]!, keys[i]!);
      this.checked.learn(id, stored.get(id));
    }
    return stored;
  }
}
