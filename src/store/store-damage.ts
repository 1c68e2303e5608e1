import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { ParkwayError } from "../common/errors.js";
import { liveTables } from "./live-tables.js";

/**
 * The store cannot be opened cleanly: a LevelDB file is missing or damaged, or the store holds less
 * than it once did. `message` is one line naming the file at fault and how to recover; nothing was
 * created over the existing files.
 */
export class StoreDamagedError extends ParkwayError {
  constructor(
    readonly location: string,
    /** The file at fault, relative to the data directory (e.g. `000005.ldb`, `CURRENT`). */
    readonly file: string,
    problem: string,
  ) {
    super(
      "data_loss",
      `store ${location} is damaged: ${file}: ${problem}; run \`parkway repair --data ${location}\` (records in damaged files are lost)`,
      { reason: "STORE_DAMAGED", metadata: { file } },
    );
  }
}

/** LevelDB's own files: the ones whose presence means a database was here. */
const LEVELDB_FILE = /^(\d{6,}\.(log|ldb|sst)|MANIFEST-\d+)$/;
/** The last 8 bytes of every LevelDB table (`kTableMagicNumber`, little-endian). */
const TABLE_MAGIC = Buffer.from("57fb808b247547db", "hex");
/** A table's footer: two block handles (padded to 40 bytes) and the magic number. */
const FOOTER_BYTES = 48;

/** The names of the files in `location`, or undefined when it does not exist (yet). */
async function listFiles(location: string): Promise<string[] | undefined> {
  try {
    return await readdir(location);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
}

/**
 * Why a live table cannot be whole, if so: not the size the MANIFEST lists, or no magic number at
 * its end. Synchronous: a few system calls per table, at start, cost less than the thread pool's
 * round trips.
 */
function tableProblem(file: string, listed: number): string | undefined {
  const fd = openSync(file, "r");
  try {
    const { size } = fstatSync(fd);
    if (size < listed) return `is truncated (${size} of ${listed} bytes)`;
    if (size !== listed) return `has ${size} bytes, not the ${listed} its MANIFEST lists`;
    if (size < FOOTER_BYTES) return `is truncated (${size} bytes, shorter than a table footer)`;
    const tail = Buffer.alloc(TABLE_MAGIC.length);
    readSync(fd, tail, 0, tail.length, size - tail.length);
    if (!tail.equals(TABLE_MAGIC)) return `is damaged (no table footer at its end)`;
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The MANIFEST that CURRENT names (without its newline), or undefined when CURRENT is unreadable. */
export async function currentManifest(location: string): Promise<string | undefined> {
  const text = await readFile(path.join(location, "CURRENT"), "utf8").catch(() => undefined);
  if (text === undefined || !text.endsWith("\n")) return undefined;
  return text.slice(0, -1);
}

/**
 * Looks at the files of a LevelDB directory before it is opened, reading only their names, CURRENT,
 * the MANIFEST and the last bytes of each live table (no record is read, so the cost grows with the
 * number of tables, not of records). Finds: CURRENT missing while LevelDB files exist (opening would
 * create a fresh, empty database beside them), CURRENT damaged or naming a missing MANIFEST, and
 * live tables missing, cut short or damaged at their end. Tables the MANIFEST does not list (left
 * by a compaction a stop cut short; LevelDB deletes them on open) are not looked at.
 * Resolves with the first problem, or undefined. Without `tables`, tables are not looked at (after a
 * repair, which set aside those it could not read and may leave empty ones it no longer uses).
 */
export async function inspectStoreFiles(
  location: string,
  options: { tables?: boolean } = {},
): Promise<StoreDamagedError | undefined> {
  const files = await listFiles(location);
  if (!files) return undefined;
  const leveldb = files.filter((f) => LEVELDB_FILE.test(f)).sort();
  if (!files.includes("CURRENT")) {
    if (leveldb.length === 0) return undefined;
    return new StoreDamagedError(
      location,
      "CURRENT",
      `is missing while the directory holds LevelDB files (${leveldb.slice(0, 3).join(", ")}${leveldb.length > 3 ? ", …" : ""})`,
    );
  }
  const manifest = await currentManifest(location);
  if (manifest === undefined) {
    return new StoreDamagedError(
      location,
      "CURRENT",
      "is damaged (not a MANIFEST name and newline)",
    );
  }
  if (!files.includes(manifest)) {
    return new StoreDamagedError(location, "CURRENT", `names ${manifest}, which is missing`);
  }
  const info = await stat(path.join(location, manifest));
  if (info.size === 0) return new StoreDamagedError(location, manifest, "is empty");
  if (options.tables === false) return undefined;
  const live = await liveTables(path.join(location, manifest));
  // A MANIFEST that cannot be parsed is left to LevelDB's open, which names what it finds.
  for (const [number, size] of live ?? []) {
    const name = String(number).padStart(6, "0");
    const table = files.includes(`${name}.ldb`) ? `${name}.ldb` : `${name}.sst`;
    if (!files.includes(table)) {
      return new StoreDamagedError(location, `${name}.ldb`, `is missing (${manifest} lists it)`);
    }
    const problem = tableProblem(path.join(location, table), size);
    if (problem) return new StoreDamagedError(location, table, problem);
  }
  return undefined;
}

/**
 * The damage behind a failed LevelDB open, when LevelDB reported corruption (its message names no
 * file: the MANIFEST that CURRENT names is the one it was reading).
 */
export async function openFailureDamage(
  location: string,
  err: unknown,
): Promise<StoreDamagedError | undefined> {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const text = cause?.message ?? "";
  if (cause?.code !== "LEVEL_CORRUPTION" && !text.startsWith("Corruption:")) return undefined;
  const manifest = (await currentManifest(location)) ?? "MANIFEST";
  const fileInText = /\/(\d{6,}\.(?:log|ldb|sst)|MANIFEST-\d+)\b/.exec(text)?.[1];
  const detail = text.replace(/^Corruption: /, "").replace(location + path.sep, "");
  return new StoreDamagedError(location, fileInText ?? manifest, `LevelDB reports "${detail}"`);
}

/**
 * The lines of LevelDB's info log (`LOG`, written afresh at every open and repair) that report
 * records it dropped while replaying a damaged log (LevelDB skips them and opens anyway), or tables a
 * repair could not use.
 */
export async function droppedOnOpen(location: string): Promise<string[]> {
  const text = await readFile(path.join(location, "LOG"), "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((line) => /dropping \d+ bytes|ignoring|Corruption:/.test(line))
    .map((line) => line.replace(/^\S+ \S+ /, ""));
}
