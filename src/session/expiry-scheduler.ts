import { isParkwayError } from "../common/errors.js";
import type { Logger } from "../common/logger.js";
import { StorageFailure } from "../store/storage-failure.js";
import type { Store } from "../store/store.js";
import { DueTimer } from "./due-timer.js";
import { ExpiryRecord } from "./records.js";

/** How soon a deadline of a session another node serves is tried again. */
const RETRY_MS = 1_000;

/**
 * Fires parked calls' deadlines. Deadlines live in the store (`expiry` records keyed by time), so
 * one whose time passed while the server was down fires at start-up, and start-up reads only the
 * due entries and the next one, never every parked reply. Entries are removed once handled; a stale
 * entry (the call was answered first) is handled as a no-op.
 */
export class ExpiryScheduler {
  private readonly timer = new DueTimer(() => this.fire());
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    /**
     * Applies the expiry policy to a session's calls due at or before `now`; "busy" when the
     * reply is running, so the deadline is tried again shortly (the run may park again with it).
     */
    private readonly expire: (sessionId: string, now: Date) => Promise<"done" | "busy">,
  ) {}

  /** Reads the earliest deadline and arms the timer. */
  async start(): Promise<void> {
    for await (const [, entry] of this.store.entries(ExpiryRecord, { limit: 1 })) {
      this.note(entry.at);
    }
  }

  /** Makes sure the timer fires no later than `at` (an ISO time). */
  note(at: string): void {
    this.timer.note(at);
  }

  private fire(): void {
    this.running = this.running
      .then(() => this.sweep())
      .catch((err: unknown) => {
        // A storage failure is logged once, by whoever watches the store.
        if (!(err instanceof StorageFailure)) this.log.error({ err }, "expiry sweep failed");
      });
  }

  /** Handles every due entry, then arms the timer for the next one. */
  private async sweep(): Promise<void> {
    const now = new Date();
    const due: { key: string; sessionId: string }[] = [];
    let next: string | undefined;
    for await (const [key, entry] of this.store.entries(ExpiryRecord)) {
      if (Date.parse(entry.at) > now.getTime()) {
        next = entry.at;
        break;
      }
      due.push({ key, sessionId: entry.sessionId });
    }
    let retry = false;
    for (const { key, sessionId } of due) {
      if (this.stopped) return;
      try {
        if ((await this.expire(sessionId, now)) === "busy") {
          retry = true;
          continue;
        }
      } catch (err) {
        if (err instanceof StorageFailure) return;
        // Served by another node for now (several nodes on one database): tried again shortly.
        if (isParkwayError(err, "unavailable")) {
          retry = true;
          continue;
        }
        this.log.warn({ err, session: sessionId }, "could not expire parked calls");
      }
      await this.store.batch().del(ExpiryRecord, key).write();
    }
    if (retry) this.note(new Date(Date.now() + RETRY_MS).toISOString());
    if (next) this.note(next);
  }

  /** Stops firing; waits for a sweep in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer.stop();
    await this.running;
  }
}
