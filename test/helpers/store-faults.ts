import { execFileSync } from "node:child_process";
import { mkdtemp, open, rm, stat, truncate } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ClassicLevel } from "classic-level";
import type { Store } from "../../src/store/index.js";

/** The LevelDB database under a LevelStore, with its writes counted and able to fail. */
export interface WriteFaults {
  /** Calls of LevelDB's batch (every write the store hands to LevelDB). */
  readonly calls: number;
  /**
   * Makes the next batch (the next synced one with `synced`) reject as LevelDB does on a full disk
   * (LEVEL_IO_ERROR), once, after `delayMs`.
   */
  failNext(options?: { delayMs?: number; synced?: boolean }): void;
  /**
   * Holds the next batch (the next synced one with `synced`) before LevelDB gets it: `held`
   * resolves once it is waiting, and it goes to LevelDB when `release` is called.
   */
  holdNext(options?: { synced?: boolean }): { held: Promise<void>; release: () => void };
}

/** An error as classic-level reports a failed log write. */
export function levelIoError(location: string): Error {
  return Object.assign(
    new Error(`IO error: ${path.join(location, "000005.log")}: No space left on device`),
    { code: "LEVEL_IO_ERROR" },
  );
}

/** Counts the writes a LevelStore hands to LevelDB and injects LEVEL_IO_ERROR on demand. */
export function writeFaults(store: Store): WriteFaults {
  // The store writes through classic-level's own `_batch` (see `writeBatch` in
  // level-write-queue.ts).
  const db = (store as unknown as { db: ClassicLevel<string, string> }).db as unknown as {
    _batch: (ops: unknown, options?: unknown) => Promise<void>;
  };
  const batch = db._batch.bind(db);
  let calls = 0;
  let fail: { delayMs: number; synced: boolean } | undefined;
  let hold: { reached: () => void; released: Promise<void>; synced: boolean } | undefined;
  db._batch = async (ops, options) => {
    calls += 1;
    const synced = (options as { sync?: boolean } | undefined)?.sync === true;
    const holding = hold && (!hold.synced || synced) ? hold : undefined;
    if (holding) hold = undefined;
    if (holding) {
      holding.reached();
      await holding.released;
    }
    const failing =
      fail && (!fail.synced || (options as { sync?: boolean } | undefined)?.sync === true)
        ? fail
        : undefined;
    if (failing) fail = undefined;
    if (failing) {
      await new Promise((resolve) => setTimeout(resolve, failing.delayMs));
      throw levelIoError(store.location);
    }
    return batch(ops, options);
  };
  return {
    get calls() {
      return calls;
    },
    failNext(options = {}) {
      fail = { delayMs: options.delayMs ?? 0, synced: options.synced ?? false };
    },
    holdNext(options = {}) {
      let reached!: () => void;
      let release!: () => void;
      const held = new Promise<void>((resolve) => (reached = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      hold = { reached, released, synced: options.synced ?? false };
      return { held, release };
    },
  };
}

/** A small tmpfs mounted for a test (root only), with a file that fills it. */
export interface SmallDisk {
  dir: string;
  /** Writes a file until the filesystem is full (ENOSPC), then gives back `leaveBytes` of it. */
  fill(leaveBytes?: number): Promise<void>;
  /** Removes the filling file. */
  free(): Promise<void>;
  unmount(): Promise<void>;
}

/**
 * Mounts a tmpfs of `size` (e.g. "2m") on a fresh directory, or returns why it cannot (`skipped`:
 * not root, no tmpfs, a container without the capability).
 */
export async function mountSmallDisk(size: string): Promise<SmallDisk | { skipped: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), "parkway-disk-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "pipe" });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    return { skipped: `cannot mount a ${size} tmpfs (${stderr || String(err)})` };
  }
  const filler = path.join(dir, "filler");
  return {
    dir,
    async fill(leaveBytes = 0) {
      const file = await open(filler, "a");
      const chunk = Buffer.alloc(64 * 1024, 1);
      try {
        for (;;) await file.write(chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
      } finally {
        await file.close().catch(() => undefined);
      }
      // The last pages: whatever a 64 KiB write could not take.
      const small = await open(filler, "a");
      try {
        for (;;) await small.write(Buffer.alloc(512, 1));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
      } finally {
        await small.close().catch(() => undefined);
      }
      if (leaveBytes > 0) {
        const { size } = await stat(filler);
        await truncate(filler, Math.max(0, size - leaveBytes));
      }
    },
    async free() {
      await rm(filler, { force: true });
    },
    async unmount() {
      try {
        execFileSync("umount", ["-l", dir], { stdio: "pipe" });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
