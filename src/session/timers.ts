import type { ExpiryScheduler } from "./expiry-scheduler.js";
import type { NotificationSender } from "./notifications/sender.js";
import type { AnswerTokenSweeper } from "./notifications/token-sweeper.js";

/**
 * What a node runs on timers beside its actors: parked calls' deadlines and, when receivers are
 * configured, the notification outbox and the sweep of expired answer-link tokens. Each reads
 * what is due from the store when it starts.
 */
export class SessionTimers {
  constructor(
    readonly expiry: ExpiryScheduler,
    readonly sender: NotificationSender | undefined,
    readonly tokens?: AnswerTokenSweeper,
  ) {}

  /** Arms them for what is due, including what fell due while the server was down. */
  async start(): Promise<void> {
    await this.expiry.start();
    await this.sender?.start();
    this.tokens?.start();
  }

  /** Stops them; waits for the work under way. */
  async stop(): Promise<void> {
    await this.expiry.stop();
    await this.sender?.stop();
    await this.tokens?.stop();
  }
}
