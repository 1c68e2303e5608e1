import { ParkwayError } from "../common/errors.js";

/**
 * The first failed write of a store: from then on the store refuses every write until the process
 * restarts, as PostgreSQL does after a failed fsync. A write that failed may have left a partial
 * record at the end of LevelDB's log; any write after it would be appended behind that record and
 * could be dropped when the log is replayed, so nothing more is written. Answered as UNAVAILABLE:
 * a restarted server (on a disk with space again) accepts the input.
 */
export class StorageFailure extends ParkwayError {
  constructor(
    /** Where the data lives. */
    readonly location: string,
    cause: unknown,
  ) {
    super(
      "unavailable",
      `storage failed (${describeCause(cause)}); this server accepts no more writes and restarts`,
      {
        reason: "STORAGE_FAILED",
        metadata: { cause: causeCode(cause) },
      },
      { cause },
    );
  }
}

/** The store was closed; it takes no more writes (the server is stopping). */
export class StoreClosedError extends ParkwayError {
  constructor(readonly location: string) {
    super("unavailable", "server shutting down; the store is closed");
  }
}

function causeCode(cause: unknown): string {
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : "UNKNOWN";
}

/**
 * The cause, safe to show to a client: LevelDB's "IO error: /data/000005.log: No space left on
 * device" without the path.
 */
function describeCause(cause: unknown): string {
  const message = cause instanceof Error ? cause.message : String(cause);
  const parts = message.split(": ").filter((p) => !p.startsWith("/"));
  return parts.join(": ") || causeCode(cause);
}

/**
 * A batch was refused because one of its checks (see `StoreBatch.check`) did not hold when the
 * batch was applied: nothing of it was written. Not a storage failure: the store goes on taking
 * writes. Answered as ABORTED: the caller reads the record again and decides anew.
 */
export class ConflictError extends ParkwayError {
  constructor(
    /** The record kind and key the check read. */
    readonly kind: string,
    readonly key: string,
    /** What the check expected, in the caller's words. */
    readonly what: string,
  ) {
    super(
      "aborted",
      `write conflict: ${what} did not hold for ${kind} ${JSON.stringify(key)}; nothing was written`,
      { reason: "WRITE_CONFLICT", metadata: { kind, key } },
    );
  }
}
