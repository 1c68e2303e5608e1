import type { Store } from "../store/store.js";
import {
  DamagedSessionRecord,
  ReplyRecord,
  SessionRecord,
  TenantSessionRecord,
} from "./records.js";
import { sessionProblem } from "./session-consistency.js";

/** A session that answers DATA_LOSS, and why. */
export interface DamagedSession {
  sessionId: string;
  problem: string;
}

/** What checking every session found. */
export interface SessionsCheck {
  /** Sessions whose records were read. */
  checked: number;
  /** Sessions that answer DATA_LOSS (newly marked or marked before). */
  damaged: DamagedSession[];
  /** Sessions still listed for their tenant whose session record is gone. */
  missing: string[];
}

/** What a parked or running reply may be after the store lost writes. */
const UNCERTAIN_REPLY =
  "its reply may have been answered or ended in writes the store lost, so it is not served as parked again";

/**
 * Checks every session's records (see `sessionProblem`, with every event read) and marks each one
 * that disagrees, so the server answers DATA_LOSS for it at once. With `lost` (the store may have
 * lost writes), a session with a parked or running reply is marked too: its reply may have been
 * answered or ended in a lost write, and must never be served as parked again.
 */
export async function checkSessions(store: Store, lost: boolean): Promise<SessionsCheck> {
  const result: SessionsCheck = { checked: 0, damaged: [], missing: [] };
  const ids: string[] = [];
  for await (const id of store.keys(SessionRecord)) ids.push(id);
  const now = new Date().toISOString();
  const batch = store.batch();
  for (const sessionId of ids) {
    result.checked += 1;
    let problem: string | undefined;
    try {
      const data = await store.get(SessionRecord, sessionId);
      if (!data) continue;
      const reply = await store.get(ReplyRecord, sessionId);
      problem = await sessionProblem(store, data, reply, { full: true });
      if (!problem && lost && (reply || data.replyId)) problem = UNCERTAIN_REPLY;
    } catch (err) {
      problem = err instanceof Error ? err.message : String(err);
    }
    if (!problem) continue;
    result.damaged.push({ sessionId, problem });
    if (!(await store.get(DamagedSessionRecord, sessionId).catch(() => undefined))) {
      batch.put(DamagedSessionRecord, sessionId, { problem, at: now });
    }
  }
  const known = new Set(ids);
  for await (const [, { sessionId }] of store.entries(TenantSessionRecord)) {
    if (!known.has(sessionId)) result.missing.push(sessionId);
  }
  await batch.write({ sync: true });
  return result;
}
