import type { ClassicLevel } from "classic-level";
import { ParkwayError } from "../common/errors.js";
import { checkDataDirectory, createDataDirectory } from "./data-directory.js";
import type { LevelTuning } from "./level-tuning.js";

/** The data directory is held by another process. */
export class StoreLockedError extends ParkwayError {
  constructor(readonly location: string) {
    super("unavailable", `data directory ${location} is in use by another Parkway server`);
  }
}

/**
 * LevelDB could not open the data directory for an I/O error although the directory itself is
 * usable (a disk too full for the new log, table or MANIFEST that opening writes, a failing device),
 * or writing the store's marker file while opening failed.
 */
export class StoreOpenError extends ParkwayError {
  constructor(
    readonly location: string,
    cause: Error,
  ) {
    super("unavailable", `cannot open the store in ${location}: ${cause.message}`, {}, { cause });
  }
}

/**
 * Creates the data directory `location` when missing, then opens the database `db` makes for it
 * (called only then). When that fails for want of a usable directory, throws `DataDirectoryError`;
 * when another process holds it, `StoreLockedError`; for another I/O error, `StoreOpenError` with
 * LevelDB's words.
 */
export async function openLevel(
  location: string,
  tuning: Readonly<LevelTuning>,
  db: () => ClassicLevel<string, string>,
): Promise<void> {
  // Made here first: LevelDB's own recursive mkdir never settles where a level cannot be made.
  const missing = await createDataDirectory(location);
  if (missing) throw missing;
  try {
    await db().open({ createIfMissing: true, ...tuning });
  } catch (err) {
    const cause = (err as { cause?: Error & { code?: string } }).cause;
    if (cause?.code === "LEVEL_LOCKED") throw new StoreLockedError(location);
    const problem = await checkDataDirectory(location);
    if (problem) throw problem;
    if (cause?.code === "LEVEL_IO_ERROR") throw new StoreOpenError(location, cause);
    throw err;
  }
}
