import { readdir } from "node:fs/promises";
import { checkStoreDirectory } from "./data-directory.js";
import {
  droppedOnOpen,
  inspectStoreFiles,
  openFailureDamage,
  StoreDamagedError,
} from "./store-damage.js";
import {
  MARKER_FILE,
  MarkerDamagedError,
  MarkerKeeper,
  newStoreData,
  readMarker,
  STORE_FORMAT,
  type StoreData,
  type StoreMarker,
  writeMarker,
} from "./store-marker.js";

/** What `verifyOpen` needs of the database. */
export interface OpenSteps {
  /** Opens LevelDB (creating it when missing). */
  open(): Promise<void>;
  close(): Promise<void>;
  /** The store record, undefined in a new database. */
  read(): StoreData | undefined;
  /** Puts the store record, synced. */
  write(data: StoreData): Promise<void>;
}

/** The logs LevelDB will replay on open, newest last (it replaces them with a table on open). */
async function logFiles(location: string): Promise<string[]> {
  const files = await readdir(location).catch(() => [] as string[]);
  return files.filter((f) => /^\d{6,}\.log$/.test(f)).sort();
}

/**
 * Opens a store only when it is whole, as far as can be told without reading its records:
 *
 * - before LevelDB opens: a directory of the user's files without a store (refused as a data
 *   directory, see `checkStoreDirectory`), the marker left by an earlier damaged open, the files (see
 *   `inspectStoreFiles`), and a marker without any LevelDB file (the whole database is gone);
 * - LevelDB's own open failures that report corruption (a damaged MANIFEST);
 * - after it opened: the records LevelDB dropped while replaying a damaged log (its `LOG` says so),
 *   and the writes it lost without a word (a log cut short looks like a crash in the middle of a
 *   write, and is dropped silently): the store record inside LevelDB counts every write, the marker
 *   file beside it the writes known to be durable; fewer in LevelDB than in the marker is a loss.
 *
 * The marker trails the synced writes by up to a second while the server runs, and is exact after
 * a clean close: a log cut after a crash loses undetected at most the last second of writes.
 * Damage found after LevelDB opened is written into the marker, because LevelDB has by then
 * replaced the damaged log: every later open refuses until `parkway repair` clears it. A marker
 * that is not one (not JSON, fields missing) is refused as damage too. With `accept`, the store is
 * taken as it is and the marker reset to it.
 */
export async function verifyOpen(
  location: string,
  accept: boolean,
  steps: OpenSteps,
): Promise<{ data: StoreData; keeper: MarkerKeeper }> {
  const foreign = await checkStoreDirectory(location);
  if (foreign) throw foreign;
  let marker: StoreMarker | undefined;
  try {
    marker = await readMarker(location);
  } catch (err) {
    if (!(err instanceof MarkerDamagedError)) throw err;
    // Without its count, writes LevelDB lost cannot be told from writes never made: a repair
    // rewrites it from the store, counting the replies that may have been answered as lost.
    if (!accept) {
      throw new StoreDamagedError(
        location,
        MARKER_FILE,
        `${err.problem}, so writes LevelDB may have lost cannot be checked`,
      );
    }
  }
  if (marker?.damaged && !accept) {
    throw new StoreDamagedError(location, marker.damaged.file, marker.damaged.problem);
  }
  const damage = await inspectStoreFiles(location, { tables: !accept });
  if (damage) throw damage;
  const logs = await logFiles(location);
  try {
    await steps.open();
  } catch (err) {
    throw (await openFailureDamage(location, err)) ?? err;
  }
  const refuse = async (file: string, problem: string): Promise<never> => {
    const base = marker ?? {
      format: STORE_FORMAT,
      storeId: steps.read()?.storeId ?? "",
      writes: 0,
    };
    await writeMarker(location, { ...base, damaged: { file, problem } });
    await steps.close();
    throw new StoreDamagedError(location, file, problem);
  };
  const log = logs.at(-1) ?? "the LevelDB log";
  const dropped = await droppedOnOpen(location);
  if (dropped.length > 0 && !accept) {
    await refuse(log, `LevelDB dropped records while replaying it (${dropped[0]})`);
  }
  let data = steps.read();
  if (!accept && marker && marker.writes > 0) {
    if (!data) {
      await refuse(
        log,
        `the store is empty, but ${MARKER_FILE} records ${marker.writes} writes made to it`,
      );
    } else if (data.storeId !== marker.storeId) {
      await refuse(MARKER_FILE, `belongs to store ${marker.storeId}, not ${data.storeId}`);
    } else if (data.writes < marker.writes) {
      await refuse(
        log,
        `lost the last ${marker.writes - data.writes} writes (LevelDB holds ${data.writes} of the ${marker.writes} that ${MARKER_FILE} records as made durable); a log cut short is dropped without a word when LevelDB opens`,
      );
    }
  }
  if (!data) {
    data = marker ? { ...newStoreData(), storeId: marker.storeId } : newStoreData();
    await steps.write(data);
  }
  const current: StoreMarker = { format: data.format, storeId: data.storeId, writes: data.writes };
  if (
    !marker ||
    marker.damaged ||
    marker.writes !== current.writes ||
    marker.storeId !== current.storeId
  ) {
    await writeMarker(location, current);
  }
  return { data, keeper: new MarkerKeeper(location, current) };
}
