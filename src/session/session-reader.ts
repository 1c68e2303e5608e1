import { notFound } from "../common/errors.js";
import type { Logger } from "../common/logger.js";
import { RecordError } from "../store/record.js";
import type { Store } from "../store/store.js";
import { type ReplyData, type SessionData, SessionRecord } from "./records.js";
import { readReplyAndProblem, sessionDataLoss } from "./session-consistency.js";

/** A session's record and its reply (running, parked or the last finished), as stored. */
export interface StoredSession {
  data: SessionData;
  reply: ReplyData | undefined;
}

/**
 * Reads a session's records from the store, and tells a session that lost data (DATA_LOSS, logged
 * once per session) from one that does not exist (NOT_FOUND).
 */
export class SessionReader {
  /** Sessions whose data loss has been logged (once each). */
  private readonly lossLogged = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  /**
   * A session's record and reply: NOT_FOUND when it does not exist (or, with `tenant`, belongs to
   * another tenant); DATA_LOSS naming what disagrees when they cannot be read or disagree (see
   * `sessionProblem`).
   */
  async read(sessionId: string, tenant?: string): Promise<StoredSession> {
    let data: SessionData | undefined;
    let reply: ReplyData | undefined;
    let problem: string | undefined;
    try {
      data = await this.store.get(SessionRecord, sessionId);
      if (!data || (tenant !== undefined && data.tenant !== tenant)) {
        throw notFound("session", sessionId);
      }
      // The session's record is read first, its other records at once after it: a write of
      // another node (several nodes on one database) may land among those reads, and changes the
      // session's record too. A problem seen while the session changed is read again (a busy
      // session may change several times over).
      for (let attempt = 1; ; attempt++) {
        ({ reply, problem } = await readReplyAndProblem(this.store, data));
        if (problem === undefined || attempt === 10) break;
        const now: SessionData | undefined = await this.store.get(SessionRecord, sessionId);
        // Changed (an answer changes its status without moving its last seq): read again.
        if (!now || JSON.stringify(now) === JSON.stringify(data)) break;
        data = now;
      }
    } catch (err) {
      // A record that cannot be read (not one from a newer version), or a block LevelDB finds
      // corrupt, is a loss.
      const corrupt =
        (err instanceof RecordError && /is (corrupt|invalid)/.test(err.message)) ||
        (err as { code?: unknown }).code === "LEVEL_CORRUPTION";
      if (!corrupt) throw err;
      problem = err instanceof RecordError ? err.message : "LevelDB reports a corrupt block";
    }
    if (problem === undefined && data) return { data, reply };
    const loss = sessionDataLoss(sessionId, problem ?? "its records cannot be read");
    if (!this.lossLogged.has(sessionId)) {
      this.lossLogged.add(sessionId);
      this.log.error({ session: sessionId, problem }, "session has lost data");
    }
    throw loss;
  }
}
