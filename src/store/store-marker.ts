import { randomUUID } from "node:crypto";
import { open, readFile, rename } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { defineRecord } from "./record.js";

/** The marker file beside LevelDB's files; LevelDB's open, repair and compactions never touch it. */
export const MARKER_FILE = "parkway-store.json";

/** The version of the store's layout the marker and the store record describe. */
export const STORE_FORMAT = 1;

const markerSchema = z.object({
  format: z.number().int(),
  /** Identifies the store: the marker and LevelDB's store record carry the same id. */
  storeId: z.string(),
  /** How many writes the store had made durable (synced) when the marker was written. */
  writes: z.number().int().nonnegative(),
  /** Set when damage was found on open; cleared by `parkway repair`. */
  damaged: z.object({ file: z.string(), problem: z.string() }).optional(),
});
export type StoreMarker = z.infer<typeof markerSchema>;

/**
 * The store's own record inside LevelDB: key "store". `writes` counts the writes handed to LevelDB
 * and is put in every one of them, so the record is as recent as the newest write LevelDB kept.
 */
export const StoreRecord = defineRecord({
  kind: "store",
  version: 1,
  checkOnWrite: false,
  schema: z.object({
    format: z.number().int(),
    storeId: z.string(),
    writes: z.number().int().nonnegative(),
  }),
});
export type StoreData = z.infer<typeof StoreRecord.schema>;
export const STORE_KEY = "store";

/** A new store's identity. */
export function newStoreData(): StoreData {
  return { format: STORE_FORMAT, storeId: randomUUID(), writes: 0 };
}

/** The marker exists but holds no marker: damaged, cut short, or edited. */
export class MarkerDamagedError extends Error {
  override readonly name = "MarkerDamagedError";
  constructor(readonly problem: string) {
    super(`${MARKER_FILE} ${problem}`);
  }
}

/**
 * Reads the marker; undefined when there is none. Throws `MarkerDamagedError` when it is not a
 * marker (not JSON, or not the marker's fields), and the file system's error when it cannot be read.
 */
export async function readMarker(location: string): Promise<StoreMarker | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(location, MARKER_FILE), "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new MarkerDamagedError(`is not valid JSON (${(err as Error).message})`);
  }
  const result = markerSchema.safeParse(parsed);
  if (!result.success) {
    const fields = result.error.issues.map((i) => i.path.join(".") || "(the whole file)");
    throw new MarkerDamagedError(`is not a store marker (bad ${[...new Set(fields)].join(", ")})`);
  }
  return result.data;
}

/** Replaces the marker atomically (a synced temporary file renamed over it). */
export async function writeMarker(location: string, marker: StoreMarker): Promise<void> {
  const target = path.join(location, MARKER_FILE);
  const temporary = `${target}.tmp`;
  const handle = await open(temporary, "w");
  try {
    await handle.writeFile(`${JSON.stringify(marker)}\n`);
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(temporary, target);
}

/**
 * Keeps the marker's `writes` close behind the writes LevelDB has synced, off the write path: at
 * most one marker write per `intervalMs`, and only for writes already synced (a synced LevelDB write
 * makes every earlier write durable too), so the marker never claims a write a crash may lose.
 */
export class MarkerKeeper {
  private recorded: number;
  private durable: number;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly location: string,
    private readonly marker: StoreMarker,
    private readonly intervalMs = 1000,
  ) {
    this.recorded = marker.writes;
    this.durable = marker.writes;
  }

  /** Write number `writes` is on disk. */
  synced(writes: number): void {
    if (writes <= this.durable) return;
    this.durable = writes;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped || this.timer || this.writing) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.writing = this.record().finally(() => {
        this.writing = undefined;
        if (this.durable > this.recorded) this.schedule();
      });
    }, this.intervalMs);
    this.timer.unref();
  }

  private async record(): Promise<void> {
    const writes = this.durable;
    // A marker that cannot be written only makes the check less recent; the store goes on.
    await writeMarker(this.location, { ...this.marker, writes }).catch(() => undefined);
    this.recorded = Math.max(this.recorded, writes);
  }

  /** Stops, and records `writes` (all durable by now) when given. */
  async close(writes?: number): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    if (writes !== undefined) {
      this.durable = Math.max(this.durable, writes);
      if (this.durable > this.recorded) await this.record();
    }
  }
}
