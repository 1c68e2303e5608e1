import { z } from "zod";
import { defineRecord } from "../store/record.js";
import type { Store } from "../store/store.js";
import type { SessionData } from "./records.js";
import type { SessionHead } from "./session-head.js";

/**
 * The most events of one session that may reach streams before they are written (see `EventHub`):
 * after a crash, a session's seqs skip this many per crash since its record was last written.
 */
export const VISIBLE_AHEAD = 16_384;

/** The most events a session stored with this status can have shown unwritten in one run. */
const SHOWN_UNWRITTEN: Record<SessionData["status"], number> = {
  running: VISIBLE_AHEAD,
  idle: 1,
  awaiting_permission: 0,
  awaiting_external_result: 0,
};

/**
 * The seq after which a loaded session's next event goes, when `times` holders of the session (runs
 * of the server, or nodes' leases) may each have shown events that were lost, as many at most as
 * `shown` says for its stored status: the range skipped is recorded in the session's record.
 */
export function skipPast(
  head: SessionHead,
  times: number,
  shown: Record<SessionData["status"], number>,
): number {
  const { lastSeq, status } = head.data;
  const skipped = times > 0 ? times * shown[status] : 0;
  if (skipped === 0) return lastSeq;
  const seq = lastSeq + skipped;
  head.skip([lastSeq + 1, seq]);
  return seq;
}

/**
 * The server's runs on this store: how many ended without a clean stop (crashes), and whether one
 * is running now. Key "runs".
 */
export const RunsRecord = defineRecord({
  kind: "runs",
  version: 1,
  schema: z.object({
    crashes: z.number().int().nonnegative(),
    /** Set while a server runs; cleared by a clean stop. Found set at a start: that run crashed. */
    running: z.boolean(),
  }),
});
const RUNS_KEY = "runs";

/**
 * Keeps seqs from being reused after a crash, though some events reach streams before they are
 * written (see `Visibility`). A run is marked running (synced) before any session loads and cleared
 * after a clean stop; a start that finds the mark counts a crash. Every session record carries the
 * crash count of the run that wrote it (`SessionData.crashes`). A session loaded with fewer crashes
 * than the store has counted may have shown events that were lost in each crashed run since, at
 * most (`SHOWN_UNWRITTEN`): `VISIBLE_AHEAD` while stored as running (the model's stream), one while
 * idle (a reply's start, whose write stores it as running before the model is called), none while
 * parked (an answer's write stores it as running before anything is shown). Its next seq skips that
 * many per such crash (`startSeq`), past anything a client may have seen, and the skipped range is
 * recorded (`SessionData.skippedSeqs`). Without a crash seqs stay gap-free.
 */
export class SeqEpoch {
  private count = 0;
  private began = false;

  constructor(private readonly store: Store) {}

  /** The crashes counted so far. */
  get crashes(): number {
    return this.count;
  }

  /** Counts the last run as a crash when it did not stop cleanly, and marks this one running. */
  async begin(): Promise<void> {
    const last = await this.store.get(RunsRecord, RUNS_KEY);
    this.count = (last?.crashes ?? 0) + (last?.running ? 1 : 0);
    await this.mark(true);
    this.began = true;
  }

  /** Marks a clean stop, once every session's events are written; not after a storage failure. */
  async end(): Promise<void> {
    if (!this.began || this.store.failure) return;
    this.began = false;
    await this.mark(false).catch(() => undefined);
  }

  /** What a new session record carries: the crashes counted when it was written. */
  stamp(): Partial<SessionData> {
    return this.count > 0 ? { crashes: this.count } : {};
  }

  /**
   * The seq after which a loaded session's next event goes: past what it may have shown and lost in
   * each crash counted since its record was written, a range the record then notes as skipped.
   */
  resume(head: SessionHead): number {
    return skipPast(head, this.count - (head.data.crashes ?? 0), SHOWN_UNWRITTEN);
  }

  private mark(running: boolean): Promise<void> {
    return this.store
      .batch()
      .put(RunsRecord, RUNS_KEY, { crashes: this.count, running })
      .write({ sync: true });
  }
}
