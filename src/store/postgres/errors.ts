import { ParkwayError } from "../../common/errors.js";

/**
 * The database's schema was made by a newer Parkway than this one: opening it could misread or
 * damage what that server wrote. Nothing was changed; upgrade this server (or point it at another
 * database).
 */
export class SchemaTooNewError extends ParkwayError {
  constructor(
    readonly location: string,
    /** The schema version the database holds. */
    readonly found: number,
    /** The newest schema version this server knows. */
    readonly known: number,
  ) {
    super(
      "failed_precondition",
      `database ${location} has schema version ${found}, newer than this server's ${known}; upgrade Parkway to use it`,
      { reason: "SCHEMA_TOO_NEW", metadata: { found: String(found), known: String(known) } },
    );
  }
}

/**
 * The database could not be opened: not reachable, credentials refused, no such database, or a
 * database Parkway cannot use (not UTF-8). `message` is one line with PostgreSQL's own words.
 */
export class DatabaseOpenError extends ParkwayError {
  constructor(
    readonly location: string,
    problem: string,
    cause?: unknown,
  ) {
    super("unavailable", `cannot open database ${location}: ${problem}`, {}, { cause });
  }
}

/**
 * A read the database did not answer (out of reach, restarting): UNAVAILABLE, so clients retry.
 * Errors of Parkway's own (a record that cannot be read, an aborted scan) pass as they are.
 */
export function readFailure(location: string, err: unknown): unknown {
  if (err instanceof ParkwayError || (err as { name?: unknown }).name === "AbortError") return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ParkwayError(
    "unavailable",
    `database ${location} could not be read (${message}); retry`,
    { reason: "DATABASE_UNAVAILABLE" },
    { cause: err },
  );
}
