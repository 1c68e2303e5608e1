import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventLog } from "../../src/session/event-log.js";
import { EventRecord, eventKey } from "../../src/session/records.js";
import { LevelStore } from "../../src/store/level-store.js";

describe("EventLog over LevelDB", () => {
  let dir: string;
  let store: LevelStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "parkway-event-log-"));
    store = new LevelStore(dir);
    await store.open();
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Appends `n` deltas and writes them as one chunk. */
  async function writeChunk(log: EventLog, n: number): Promise<void> {
    for (let i = 0; i < n; i += 1) {
      log.append("reply_1", {
        type: "text_block_delta",
        blockId: "b",
        delta: String(log.lastSeq + 1),
      });
    }
    const batch = store.batch();
    log.putInto(batch, log.drainPending());
    await batch.write();
  }

  async function seqs(log: EventLog, after: number, upto: number): Promise<number[]> {
    const out: number[] = [];
    for await (const e of log.read(after, upto)) out.push(e.seq);
    return out;
  }

  it("stores one record per write and reads any range across chunks, in order", async () => {
    const log = new EventLog(store, "ses_a", 0);
    await writeChunk(log, 3); // 1-3
    await writeChunk(log, 1); // 4
    await writeChunk(log, 5); // 5-9
    const other = new EventLog(store, "ses_a0", 0); // a session id that extends this one
    await writeChunk(other, 2);

    const keys: string[] = [];
    for await (const [key] of store.entries(EventRecord, {})) keys.push(key);
    expect(keys).toEqual([
      eventKey("ses_a", 3),
      eventKey("ses_a", 4),
      eventKey("ses_a", 9),
      eventKey("ses_a0", 2),
    ]);

    expect(await seqs(log, 0, 9)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await seqs(log, 2, 6)).toEqual([3, 4, 5, 6]);
    expect(await seqs(log, 4, 4)).toEqual([]);
    expect(await seqs(log, 8, 20)).toEqual([9]);
    expect(await seqs(other, 0, 9)).toEqual([1, 2]);
  });

  it("lists the chunks wholly inside a range, for compaction", async () => {
    const log = new EventLog(store, "ses_b", 0);
    await writeChunk(log, 2); // 1-2
    await writeChunk(log, 3); // 3-5
    await writeChunk(log, 2); // 6-7
    expect(await log.chunkKeys(0, 5)).toEqual([eventKey("ses_b", 2), eventKey("ses_b", 5)]);
    // The chunk 3-5 also holds events past 4: it stays.
    expect(await log.chunkKeys(0, 4)).toEqual([eventKey("ses_b", 2)]);
  });
});
