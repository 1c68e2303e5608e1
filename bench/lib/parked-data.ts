import { createHash } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ClassicLevel } from "classic-level";
import type { Msg } from "../../src/agent/types.js";
import * as records from "../../src/session/records.js";
import { createLevelStore } from "../../src/store/level-store.js";
import { LEVEL_TUNING } from "../../src/store/level-tuning.js";
import type { Store, StoreBatch } from "../../src/store/store.js";
import { NOOP_TOOL } from "./model.js";

/** Sessions written per batch. */
const BATCH = 2000;

/** The id of the i-th parked session of a data set. */
export const parkedId = (i: number): string => `ses_bench${records.pad(i, 8)}`;

/** A data directory with `size` parked replies. */
export interface ParkedData {
  size: number;
  /** The LevelDB directory (Parkway's `data`). */
  dir: string;
  /** Seconds it took to build (this run or the one that cached it). */
  buildSeconds: number;
  cached: boolean;
  /** Sessions resumed (no longer parked) by the runs since it was built. */
  resumed: number;
  /** The file that says the data set is complete. */
  marker: string;
}

/**
 * What the record schemas and the store's LevelDB tuning look like: data sets built with other
 * schemas or tables laid out otherwise are not reused.
 */
async function fingerprint(): Promise<string> {
  const hash = createHash("sha256");
  // What shapes the tables; the caches' sizes do not.
  const { blockSize, maxFileSize, writeBufferSize } = LEVEL_TUNING;
  hash.update(JSON.stringify({ blockSize, maxFileSize, writeBufferSize }));
  for (const rel of [
    "../../src/session/records.ts",
    "../../src/agent/types.ts",
    "./parked-data.ts",
  ]) {
    hash.update(await readFile(fileURLToPath(new URL(rel, import.meta.url))));
  }
  return hash.digest("hex").slice(0, 12);
}

/**
 * The records of one parked reply: awaiting a confirmation of one bench_noop call, with the events
 * a real park stores (REPLY_START, REQUIRE_USER_CONFIRM, REPLY_PARKED) and its entry in the parked
 * index, so the session's records agree.
 */
function putParked(batch: StoreBatch, i: number, workdir: string, now: string): void {
  const id = parkedId(i);
  const replyId = `reply_bench${records.pad(i, 8)}`;
  const user: Msg = {
    id: `msg_bench${records.pad(i, 8)}`,
    role: "user",
    name: "user",
    content: [{ type: "text", id: `blk_bench${records.pad(i, 8)}`, text: "park" }],
    createdAt: now,
  };
  const message: Msg = {
    id: replyId,
    role: "assistant",
    name: "bench",
    content: [
      {
        type: "tool_call",
        id: `call_bench${records.pad(i, 8)}`,
        name: NOOP_TOOL,
        input: JSON.stringify({ note: "parked by the benchmark" }),
        state: "asking",
      },
    ],
    createdAt: now,
  };
  batch.put(records.SessionRecord, id, {
    id,
    tenant: "default",
    agentId: "bench",
    status: "awaiting_permission",
    workingDirectories: [workdir],
    externalTools: [],
    createdAt: now,
    updatedAt: now,
    lastSeq: 3,
    messageCount: 1,
    replyId,
  });
  const call = message.content[0]!;
  const event = (seq: number, body: Record<string, unknown>) => ({
    id: `evt_bench${records.pad(i, 8)}_${seq}`,
    seq,
    replyId,
    createdAt: now,
    body: body as never,
  });
  batch.put(records.EventRecord, records.eventKey(id, 3), {
    events: [
      event(1, { type: "reply_start", name: "bench", role: "assistant" }),
      event(2, { type: "require_user_confirm", toolCalls: [call] }),
      event(3, { type: "reply_parked", message }),
    ],
  });
  batch.put(records.MessageRecord, records.messageKey(id, 0), user);
  batch.put(records.ReplyRecord, id, {
    replyId,
    message,
    iteration: 1,
    state: "parked",
    startedAt: now,
    snapshotSeq: 3,
  });
  batch.put(records.ParkedRecord, id, { agentId: "bench", replyId });
  // The per-tenant listing index, where this version of the records has one.
  const more = records as unknown as Record<string, unknown>;
  const index = more.TenantSessionRecord as typeof records.SessionRecord | undefined;
  const key = more.tenantSessionKey as ((tenant: string, id: string) => string) | undefined;
  if (index && key) batch.put(index as never, key("default", id), { sessionId: id } as never);
}

/** The tenant's session count, where this version of the records keeps one. */
function putCount(batch: StoreBatch, sessions: number): void {
  const more = records as unknown as Record<string, unknown>;
  const counter = more.TenantCountRecord as typeof records.SessionRecord | undefined;
  if (counter) batch.put(counter as never, "default", { sessions } as never);
}

/**
 * Writes `size` parked replies into a new store at `dir` in batches of 2000 sessions, then
 * compacts it, so every run starts from the settled store a long-running server would have.
 */
async function build(dir: string, workdir: string, size: number): Promise<void> {
  const store: Store = createLevelStore(dir);
  await store.open();
  try {
    const now = new Date().toISOString();
    for (let start = 0; start < size; start += BATCH) {
      const batch = store.batch();
      const end = Math.min(size, start + BATCH);
      for (let i = start; i < end; i++) putParked(batch, i, workdir, now);
      if (end === size) putCount(batch, size);
      await batch.write({ sync: end === size });
      if (size >= 100_000 && (end / BATCH) % 50 === 0) {
        process.stderr.write(`bench: built ${end.toLocaleString("en-US")} parked replies\n`);
      }
    }
  } finally {
    await store.close();
  }
  const db = new ClassicLevel(dir);
  await db.open(LEVEL_TUNING); // the tables written as the store would write them
  await db.compactRange("!", "~"); // every sublevel's keys start with "!"
  await db.close();
}

/**
 * A data directory with `size` parked replies, written straight into the store with the store's
 * record types (a SessionRecord awaiting permission, its user message, and a ReplyRecord parked on
 * one bench_noop call asking for confirmation). Built once per record schema and cached under
 * `cacheDir`; later runs skip the sessions resumed before, and the data set is built again once
 * fewer than `reserve` parked sessions may be left.
 */
export async function parkedData(cacheDir: string, size: number, reserve = 0): Promise<ParkedData> {
  const root = path.join(cacheDir, `parked-${size}-${await fingerprint()}`);
  const dir = path.join(root, "data");
  const marker = path.join(root, "complete.json");
  try {
    const done = JSON.parse(await readFile(marker, "utf8")) as {
      buildSeconds: number;
      resumed?: number;
    };
    const resumed = done.resumed ?? 0;
    if (size - resumed >= reserve) {
      return { size, dir, buildSeconds: done.buildSeconds, cached: true, resumed, marker };
    }
  } catch {
    // not built yet (or interrupted): build from scratch
  }
  await rm(root, { recursive: true, force: true });
  await mkdir(path.join(root, "work"), { recursive: true });
  const t0 = Date.now();
  await build(dir, path.join(root, "work"), size);
  const buildSeconds = (Date.now() - t0) / 1000;
  await writeFile(marker, JSON.stringify({ size, buildSeconds, resumed: 0 }));
  return { size, dir, buildSeconds, cached: false, resumed: 0, marker };
}

/** Records that `count` more sessions of the data set were resumed. */
export async function noteResumed(data: ParkedData, count: number): Promise<void> {
  data.resumed += count;
  const { size, buildSeconds, resumed } = data;
  await writeFile(data.marker, JSON.stringify({ size, buildSeconds, resumed }));
}

/**
 * `n` session indices spread over `size`, different on every call, in random order: the first few
 * of them are spread over the whole key space too (callers take them one by one, skipping those
 * no longer parked).
 */
export function sampleIndices(size: number, n: number): number[] {
  const out = new Set<number>();
  const step = size / n;
  for (let k = 0; k < n && out.size < size; k++) {
    out.add(Math.min(size - 1, Math.floor(k * step + Math.random() * step)));
  }
  const order = [...out];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}
