import type { Msg } from "../agent/types.js";
import { isoNow } from "../common/iso-now.js";
import type { StoreBatch } from "../store/store.js";
import { type SessionData, SessionRecord, type SessionStatus } from "./records.js";

/**
 * A session's record as memory holds it: its status, counts, mode and the seq of its last stored
 * event. Every change is kept until the next write of the session's events, which stores the
 * record with them (`writeInto`); a write that neither changed it nor stored an event leaves it.
 * With it, the session's messages read so far (`history`).
 */
export class SessionHead {
  private changed = false;
  private messages: Msg[] | undefined;

  /**
   * `stamp`: what every write of the record sets (the server's crash count, see `SeqEpoch`; the
   * token of the node's lease, see `resumeUnder`).
   */
  constructor(
    private current: SessionData,
    private stamp: Partial<SessionData> = {},
  ) {}

  /** Changes what every write of the record sets from the next one on (a lease taken again). */
  restamp(stamp: Partial<SessionData>): void {
    this.stamp = stamp;
  }

  get data(): SessionData {
    return this.current;
  }

  get id(): string {
    return this.current.id;
  }

  get tenant(): string {
    return this.current.tenant;
  }

  /** The messages read so far (see `readHistory`), kept while the session is in memory. */
  get history(): Msg[] {
    return (this.messages ??= []);
  }

  /** A message just stored at `index`: kept in the history when it follows what was read. */
  remember(index: number, msg: Msg): void {
    const known = this.messages ?? (index === 0 ? (this.messages = []) : undefined);
    if (known?.length === index) known.push(msg);
  }

  /** Changes fields of the record; the change is stored with the next write. */
  update(patch: Partial<SessionData>): void {
    this.current = { ...this.current, ...patch };
    this.changed = true;
  }

  /** Sets the status and the current reply (none when `replyId` is undefined). */
  setStatus(status: SessionStatus, replyId?: string): void {
    const next: SessionData = { ...this.current, status };
    if (replyId) next.replyId = replyId;
    else delete next.replyId;
    this.current = next;
    this.changed = true;
  }

  /** Sets the session's own mode; undefined follows the agent's. */
  setMode(mode: SessionData["mode"]): void {
    const next: SessionData = { ...this.current };
    if (mode) next.mode = mode;
    else delete next.mode;
    this.current = next;
    this.changed = true;
  }

  /** The number the next request id of this session is recorded under. */
  get nextRequest(): number {
    return this.current.requestCount ?? 0;
  }

  /** Counts one more request id and returns the number it is recorded under. */
  takeRequest(): number {
    const order = this.nextRequest;
    this.update({ requestCount: order + 1 });
    return order;
  }

  /** Records that the seqs `range` (first, last) are never used. */
  skip(range: [number, number]): void {
    this.update({ skippedSeqs: [...(this.current.skippedSeqs ?? []), range] });
  }

  /** Puts the record into `batch` when it changed or `lastSeq` moved since it was last stored. */
  writeInto(batch: StoreBatch, lastSeq: number): void {
    if (!this.changed && lastSeq === this.current.lastSeq) return;
    this.changed = false;
    this.current = { ...this.current, ...this.stamp, lastSeq, updatedAt: isoNow() };
    batch.put(SessionRecord, this.current.id, this.current);
  }
}
