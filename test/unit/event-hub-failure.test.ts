import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventHub } from "../../src/session/event-hub.js";
import type { HubOptions } from "../../src/session/hub-options.js";
import { EventLog } from "../../src/session/event-log.js";
import { LevelStore } from "../../src/store/level-store.js";
import { StorageFailure } from "../../src/store/index.js";
import { captureLog } from "../helpers/capture-log.js";
import { writeFaults } from "../helpers/store-faults.js";

const delta = (text: string) => ({ type: "text_block_delta" as const, blockId: "b", delta: text });

function owner(): HubOptions & { failures: Error[] } {
  const failures: Error[] = [];
  return { failures, onFailure: (error) => failures.push(error) };
}

async function stored(store: LevelStore, sessionId: string): Promise<number[]> {
  const out: number[] = [];
  for await (const e of new EventLog(store, sessionId, 0).read(0, 1000)) out.push(e.seq);
  return out;
}

describe("EventHub after a failed write", () => {
  let store: LevelStore;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeEach(async () => {
    store = new LevelStore(await mkdtemp(path.join(tmpdir(), "parkway-hub-")));
    await store.open();
    unhandled.length = 0;
    process.on("unhandledRejection", onUnhandled);
  });

  afterEach(async () => {
    process.off("unhandledRejection", onUnhandled);
    await store.close();
  });

  it("drops what was not stored, writes nothing more, and ends its streams", async () => {
    const faults = writeFaults(store);
    const o = owner();
    const log = captureLog();
    const hub = new EventHub(store, "ses_a", 0, log, o);
    hub.emit("r1", delta("1"));
    hub.emit("r1", delta("2"));
    await hub.commit();
    const stream = hub.attach(2, new AbortController().signal, () => undefined);

    faults.failNext();
    hub.emit("r1", delta("3"));
    const failed = await hub.commit().catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(StorageFailure);
    expect(hub.lastSeq).toBe(2);
    expect(o.failures).toEqual([failed]);
    await expect(stream.items.next()).rejects.toBe(failed);

    // An interrupt after it: nothing is written, no seq is taken.
    const calls = faults.calls;
    hub.emit("r1", delta("4"));
    await expect(hub.commit({ sync: true })).rejects.toBe(failed);
    await hub.settled();
    expect(hub.lastSeq).toBe(2);
    expect(faults.calls).toBe(calls);
    expect(await stored(store, "ses_a")).toEqual([1, 2]);
    // The storage failure is not the hub's to log.
    expect(log.entries.filter((e) => e.level === "error")).toEqual([]);
    expect(unhandled).toEqual([]);
  });

  it("rejects the commit, never the process, when building the write throws", async () => {
    const o = owner();
    const log = captureLog();
    const hub = new EventHub(store, "ses_b", 0, log, o);
    hub.emit("r1", delta("1"));
    await hub.commit();
    hub.emit("r1", delta("2"));
    hub.stage(() => {
      throw new Error("a record that does not validate");
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await hub.settled();
    await expect(hub.commit()).rejects.toMatchObject({ code: "unavailable" });
    expect(hub.lastSeq).toBe(1);
    expect(o.failures).toHaveLength(1);
    expect(log.entries.filter((e) => e.msg === "event log write failed")).toHaveLength(1);
    expect(await stored(store, "ses_b")).toEqual([1]);
    expect(unhandled).toEqual([]);
  });
});
