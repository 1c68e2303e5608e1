import { open, readdir, readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { afterEach, describe, expect, it } from "vitest";
import { defineRecord, LevelStore, StoreDamagedError } from "../../src/store/index.js";
import { MARKER_FILE } from "../../src/store/store-marker.js";
import { tempDir } from "../helpers/spawn-server.js";

const Note = defineRecord({ kind: "note", version: 1, schema: z.object({ text: z.string() }) });

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A store with `count` synced writes, closed cleanly. */
async function filled(count: number): Promise<string> {
  const dir = await tempDir("parkway-damage-");
  dirs.push(dir);
  const store = new LevelStore(dir);
  await store.open();
  for (let i = 0; i < count; i++) {
    await store
      .batch()
      .put(Note, `n${String(i).padStart(3, "0")}`, { text: "x".repeat(100) })
      .write({ sync: true });
  }
  await store.close();
  return dir;
}

async function openError(dir: string): Promise<unknown> {
  const store = new LevelStore(dir);
  try {
    await store.open();
  } catch (err) {
    return err;
  }
  await store.close();
  throw new Error("the store opened");
}

const marker = async (dir: string) =>
  JSON.parse(await readFile(path.join(dir, MARKER_FILE), "utf8")) as { writes: number };

describe("a store's marker", () => {
  it("records every write after a clean close", async () => {
    const dir = await filled(20);
    const store = new LevelStore(dir);
    await store.open();
    expect(store.writes).toBe(20);
    await store.close();
    expect((await marker(dir)).writes).toBe(20);
  });

  it("refuses a store whose LevelDB files are all gone, rather than starting empty", async () => {
    const dir = await filled(5);
    for (const file of await readdir(dir)) {
      if (file !== MARKER_FILE) await rm(path.join(dir, file));
    }
    const err = await openError(dir);
    expect(err).toBeInstanceOf(StoreDamagedError);
    expect((err as Error).message).toContain(`the store is empty, but ${MARKER_FILE} records 5`);
    // Still refused: the damage is remembered until a repair.
    expect(await openError(dir)).toBeInstanceOf(StoreDamagedError);
  });

  it("refuses a store whose log LevelDB replayed only in part (a damaged record in the middle)", async () => {
    const dir = await filled(40);
    const log = (await readdir(dir)).find((f) => f.endsWith(".log"))!;
    const handle = await open(path.join(dir, log), "r+");
    const { size } = await stat(path.join(dir, log));
    await handle.write(Buffer.from("garbage!"), 0, 8, Math.floor(size / 3));
    await handle.close();
    const err = await openError(dir);
    expect(err).toBeInstanceOf(StoreDamagedError);
    expect((err as Error).message).toContain(`${log}: LevelDB dropped records while replaying it`);
  });
});
