import type { Logger } from "../../common/logger.js";
import { StorageFailure } from "../../store/storage-failure.js";
import type { Store } from "../../store/store.js";
import { AnswerTokenRecord } from "./answer-links.js";

/** How often expired answer-link tokens are removed. */
const SWEEP_MS = 60 * 60 * 1000;

/** Tokens removed per write. */
const PER_WRITE = 256;

/**
 * Removes answer-link tokens past their expiry, at start and hourly. A token is deleted when its
 * link is used; one whose call was answered some other way (or never) would otherwise stay in the
 * store for good, one per link sent. Several nodes may sweep at once: a token removed twice is
 * removed.
 */
export class AnswerTokenSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly everyMs = SWEEP_MS,
  ) {}

  /** Sweeps now, then every `everyMs`. */
  start(): void {
    this.fire();
    this.timer = setInterval(() => this.fire(), this.everyMs);
    this.timer.unref();
  }

  private fire(): void {
    this.running = this.running
      .then(() => this.sweep())
      .then(
        (removed) => {
          if (removed > 0) this.log.info({ removed }, "removed expired answer-link tokens");
        },
        (err: unknown) => {
          // A storage failure is logged once, by whoever watches the store.
          if (!(err instanceof StorageFailure)) this.log.warn({ err }, "answer token sweep failed");
        },
      );
  }

  /** Removes the tokens expired at `now`; how many. */
  async sweep(now = Date.now()): Promise<number> {
    let batch = this.store.batch();
    let staged = 0;
    let removed = 0;
    for await (const [key, token] of this.store.entries(AnswerTokenRecord)) {
      if (this.stopped) break;
      if (Date.parse(token.expiresAt) > now) continue;
      batch.del(AnswerTokenRecord, key);
      staged += 1;
      if (staged === PER_WRITE) {
        await batch.write();
        removed += staged;
        staged = 0;
        batch = this.store.batch();
      }
    }
    if (staged > 0) {
      await batch.write();
      removed += staged;
    }
    return removed;
  }

  /** Stops sweeping; waits for a sweep in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }
}
