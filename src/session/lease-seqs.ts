import type { SessionData } from "./records.js";
import { skipPast, VISIBLE_AHEAD } from "./seq-epoch.js";
import type { SessionHead } from "./session-head.js";
import type { Lease } from "./session-leases.js";

/**
 * The most events a holder of a session's lease can have shown unwritten, by the session's stored
 * status. A node shows nothing before a write under its lease has stored the reply's start (see
 * `HubOptions.holdStart`): that write is durable, and so is the lease taken before it, whereas a
 * lease write alone may be lost with the database (`SessionLeases`). Only a running reply's model
 * stream goes out ahead of its writes.
 */
const SHOWN_UNWRITTEN: Record<SessionData["status"], number> = {
  running: VISIBLE_AHEAD,
  idle: 0,
  awaiting_permission: 0,
  awaiting_external_result: 0,
};

/** What a session's record written under `lease` carries: the lease's token. */
export function leaseStamp(lease: Lease): Partial<SessionData> {
  return { leaseToken: lease.token };
}

/**
 * How many holders of a session's lease may have shown events that are not stored: every holder
 * from the one that last wrote the session's record (`SessionData.leaseToken`, 0 before any) to
 * the lease's holder `before` (none: no node ever held it), but that one when it let the lease go
 * cleanly. Tokens grow by one per holder, so the holders in between are counted though they may
 * have written nothing.
 */
function uncleanHolders(data: SessionData, before: Lease["before"]): number {
  if (!before) return 0;
  const holders = before.token - (data.leaseToken ?? 0) + 1;
  return Math.max(0, holders - (before.clean ? 1 : 0));
}

/**
 * The seq after which a session loaded under `lease` goes on: past what the holders before it may
 * have shown and not written (see `uncleanHolders`), a range its record then notes as skipped. The
 * seqs of a session stay gap-free while every holder lets its lease go cleanly.
 */
export function resumeUnder(head: SessionHead, lease: Lease): number {
  return skipPast(head, uncleanHolders(head.data, lease.before), SHOWN_UNWRITTEN);
}

/**
 * The last seq a client may have seen of a session stored as `data`, whose lease record reads as
 * `lease` now: events its holders may have shown unwritten count too (a stream may attach after
 * them).
 */
export function lastSeqShown(
  data: SessionData,
  lease: { token: number; clean?: boolean | undefined } | undefined,
): number {
  const before = lease && { token: lease.token, clean: lease.clean === true };
  return data.lastSeq + uncleanHolders(data, before) * SHOWN_UNWRITTEN[data.status];
}
