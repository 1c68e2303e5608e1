import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { ClassicLevel } from "classic-level";
import { DataDirectoryError } from "./data-directory.js";
import { StoreLockedError } from "./level-open.js";
import { LevelStore } from "./level-store.js";
import { droppedOnOpen } from "./store-damage.js";
import { MarkerDamagedError, readMarker, type StoreMarker } from "./store-marker.js";

/** What a repair found and may have lost. */
export interface RepairReport {
  /** Tables LevelDB's repair could not read and moved to `lost/` (their records are gone). */
  lostFiles: string[];
  /** Lines of LevelDB's repair log about records it dropped or tables it ignored. */
  dropped: string[];
  /** Writes the marker recorded as durable that the repaired store does not hold. */
  lostWrites: number;
  /** The damage an earlier open recorded, if any. */
  damaged?: { file: string; problem: string };
  /**
   * What was wrong with a marker that was not one: lost writes could not be counted, so the
   * repair counts as lossy (a parked or running reply may have been answered in a lost write).
   */
  markerDamaged?: string;
  /** True when any record may have been lost: replies may then be older than clients saw them. */
  lossy: boolean;
}

async function filesIn(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => [] as string[]);
}

/** Refuses to repair a directory a running server holds (LevelDB's repair takes no lock). */
async function assertNotInUse(location: string): Promise<void> {
  const db = new ClassicLevel(location);
  try {
    await db.open({ createIfMissing: false });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    if (cause?.code === "LEVEL_LOCKED") throw new StoreLockedError(location);
  } finally {
    await db.close().catch(() => undefined);
  }
}

/**
 * Repairs a LevelDB data directory: LevelDB's repair rebuilds the MANIFEST and CURRENT from every
 * table and log it can read, keeps every record it can read, drops records in a damaged part of a
 * log, and moves tables it cannot read to `lost/` (their records are gone). Then opens the store,
 * accepting it as it now is (the marker is reset to it). Resolves with the open store and a report
 * of what may have been lost.
 */
export async function repairStore(
  location: string,
): Promise<{ store: LevelStore; report: RepairReport }> {
  const info = await stat(location).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new DataDirectoryError(location, location, "ENOENT", "no such data directory");
  }
  await assertNotInUse(location);
  let marker: StoreMarker | undefined;
  let markerDamaged: string | undefined;
  try {
    marker = await readMarker(location);
  } catch (err) {
    if (!(err instanceof MarkerDamagedError)) throw err;
    markerDamaged = err.problem;
  }
  const lostDir = path.join(location, "lost");
  const lostBefore = new Set(await filesIn(lostDir));
  await ClassicLevel.repair(location);
  const dropped = await droppedOnOpen(location);
  // The repair also moves there the logs it turned into tables and the MANIFEST it replaced.
  const lostFiles = (await filesIn(lostDir)).filter(
    (f) => !lostBefore.has(f) && /\.(ldb|sst)$/.test(f),
  );
  const store = new LevelStore(location);
  await store.open({ accept: true });
  const lostWrites = marker ? Math.max(0, marker.writes - store.writes) : 0;
  const report: RepairReport = {
    lostFiles,
    dropped: [...new Set(dropped)],
    lostWrites,
    ...(marker?.damaged ? { damaged: marker.damaged } : {}),
    ...(markerDamaged === undefined ? {} : { markerDamaged }),
    lossy:
      lostFiles.length > 0 ||
      dropped.length > 0 ||
      lostWrites > 0 ||
      marker?.damaged !== undefined ||
      markerDamaged !== undefined,
  };
  return { store, report };
}
