import { open, readdir, unlink } from "node:fs/promises";
import path from "node:path";
import { ParkwayError } from "../common/errors.js";
import { makeDirectory } from "../common/make-directory.js";

/** The data directory cannot be used; `message` is one line naming the path at fault and the errno. */
export class DataDirectoryError extends ParkwayError {
  constructor(
    readonly location: string,
    /** The path the failing operation was on: the directory, a parent, or a file inside it. */
    readonly path: string,
    /** The errno's name, e.g. EROFS, EACCES, ENOTDIR. */
    readonly errno: string,
    description: string,
  ) {
    super(
      "unavailable",
      path === location
        ? `cannot use data directory ${location}: ${description} (${errno})`
        : `cannot use data directory ${location}: ${path}: ${description} (${errno})`,
    );
  }
}

/** The errno's text from a Node.js system error ("EROFS: read-only file system, open '…'"). */
function describe(err: NodeJS.ErrnoException): string {
  const text = /^[A-Z]+: ([^,]+)/.exec(err.message)?.[1];
  return text ?? err.message;
}

function asProblem(
  location: string,
  at: string,
  err: unknown,
  doing = "",
): DataDirectoryError | undefined {
  const e = err as NodeJS.ErrnoException;
  if (typeof e.code !== "string" || !e.code.startsWith("E")) return undefined;
  return new DataDirectoryError(location, at, e.code, `${doing}${describe(e)}`);
}

/**
 * Creates the data directory and its missing parents one level at a time (see `makeDirectory`), so
 * the errno is the real one, not a recursive mkdir's ENOENT, and a level that cannot be made fails
 * instead of making Node's recursive mkdir loop. Resolves with the failure, naming the level.
 */
export async function createDataDirectory(
  location: string,
): Promise<DataDirectoryError | undefined> {
  try {
    await makeDirectory(location);
    return undefined;
  } catch (err) {
    const at = (err as NodeJS.ErrnoException).path ?? path.resolve(location);
    return asProblem(location, at, err);
  }
}

/**
 * Finds why `location` cannot be a data directory, by doing what opening it needs one step at a
 * time: each missing directory on its path is created (`createDataDirectory`), then a file is
 * created and removed inside it. Resolves with the first failure, or undefined when every step
 * works.
 */
export async function checkDataDirectory(
  location: string,
): Promise<DataDirectoryError | undefined> {
  const absolute = path.resolve(location);
  const missing = await createDataDirectory(location);
  if (missing) return missing;
  const probe = path.join(absolute, `.parkway-write-check-${process.pid}`);
  try {
    const handle = await open(probe, "wx");
    await handle.close();
  } catch (err) {
    return asProblem(location, location, err, "cannot create a file in it: ");
  }
  await unlink(probe).catch(() => undefined);
  return undefined;
}

/**
 * What a directory that holds a Parkway store (LevelDB) may hold besides the user's hidden files:
 * the store's marker (and its temporary file), LevelDB's files, and `lost/`, where a repair sets
 * aside what it could not read. `lost+found` is a new file system's own.
 */
const STORE_ENTRY =
  /^(parkway-store\.json(\.tmp)?|CURRENT|LOCK|LOG(\.old)?|MANIFEST-\d+|\d+\.(log|ldb|sst|dbtmp)|lost)\/?$/;
/** Entries that hold a store: the marker, or a file only LevelDB makes. */
const STORE_MARK = /^(parkway-store\.json|CURRENT|MANIFEST-\d+|\d+\.(log|ldb|sst))$/;

/**
 * Refuses a directory that holds the user's files and no Parkway store, so LevelDB's files are never
 * created among them: it must be missing, empty (hidden files and `lost+found` aside), or hold a
 * store (its marker or LevelDB's files, also damaged ones, which the open then diagnoses).
 */
export async function checkStoreDirectory(
  location: string,
): Promise<DataDirectoryError | undefined> {
  let entries: string[];
  try {
    const found = await readdir(location, { withFileTypes: true });
    entries = found.map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
  } catch {
    return undefined; // missing, or not a directory: the open explains it
  }
  const foreign = entries.filter(
    (name) => !name.startsWith(".") && name !== "lost+found/" && !STORE_ENTRY.test(name),
  );
  if (foreign.length === 0 || entries.some((name) => STORE_MARK.test(name))) return undefined;
  const shown = foreign.sort().slice(0, 3);
  return new DataDirectoryError(
    location,
    location,
    "ENOTEMPTY",
    `it is not empty (${shown.join(", ")}${foreign.length > shown.length ? ", …" : ""}) and holds no Parkway store; give a new or empty directory, or one a Parkway server made`,
  );
}

/** The words the system gives the errors a full or failing disk causes. */
const SYSTEM_WORDS: Record<string, string> = {
  ENOSPC: "No space left on device",
  EDQUOT: "Disk quota exceeded",
  EIO: "Input/output error",
  EROFS: "Read-only file system",
};

/** A failed file operation in the words LevelDB uses for its own (`No space left on device`). */
export function fileFailure(err: NodeJS.ErrnoException): Error {
  const code = err.code ?? "";
  const words = SYSTEM_WORDS[code] ?? describe(err);
  const where = [err.syscall, err.path].filter(Boolean).join(" ");
  return new Error(`${words} (${code}${where ? `, ${where}` : ""})`, { cause: err });
}
