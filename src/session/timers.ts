import type { ExpiryScheduler } from "./expiry-scheduler.js";
import type { NotificationSender } from "./notifications/sender.js";

/**
 * What a node runs on timers beside its actors: parked calls' deadlines and, when receivers are
 * configured, the notification outbox. Both read what is due from the store when they start.
 */
export class SessionTimers {
  constructor(
    readonly expiry: ExpiryScheduler,
    readonly sender: NotificationSender | undefined,
  ) {}

  /** Arms both for what is due, including what fell due while the server was down. */
  async start(): Promise<void> {
    await this.expiry.start();
    await this.sender?.start();
  }

  /** Stops both; waits for the work under way. */
  async stop(): Promise<void> {
    await this.expiry.stop();
    await this.sender?.stop();
  }
}
