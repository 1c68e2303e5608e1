import type { Logger } from "../../common/logger.js";
import type { Metrics } from "../../common/telemetry.js";
import { ConflictError, StorageFailure } from "../../store/storage-failure.js";
import type { Store, StoreBatch } from "../../store/store.js";
import { DueTimer } from "../due-timer.js";
import { pendingCalls } from "../pending-calls.js";
import { ReplyRecord } from "../records.js";
import { withAnswerLinks } from "./answer-links.js";
import { deliver, retryDelay } from "./delivery.js";
import { type NotificationBody, stillPending } from "./notification-body.js";
import type { TargetRef } from "./outbox.js";
import {
  DeadLetterRecord,
  deadLetterKey,
  type OutboxEntry,
  OutboxRecord,
  outboxKey,
} from "./outbox-records.js";

/** Most notifications taken per sweep, and sent at once. */
const SWEEP_LIMIT = 32;
/**
 * Most attempts under way at once to one receiver: a receiver that holds its requests fills only
 * its own slots, and the rest of its notifications wait (still due) for one of them to end.
 */
const RECEIVER_LIMIT = 32;
/** How long a claimed notification waits past its timeout before another sweep may take it. */
const CLAIM_GRACE_MS = 5_000;

/** Finds the receiver a stored notification was written for (undefined: no longer configured). */
export type TargetOf = (owner: OutboxEntry["owner"], url: string) => TargetRef | undefined;

/**
 * Delivers the outbox, at least once. Notifications live in the store keyed by when they are due,
 * so those a stop interrupted or delayed are sent after a restart, and a sweep reads only the due
 * ones and the next. Each is claimed before it is sent (a compare-and-set that moves it past the
 * attempt's timeout), so one node sends it; a node that dies while sending leaves it due again
 * after the claim. A failed attempt is retried with backoff; after the last, it is a dead letter.
 * A parked reply's notification is re-checked when sent: calls answered since are left out, and
 * it is not sent when none is left. A sweep only starts its attempts: each runs on its own, bounded
 * by its receiver's timeout, so a slow receiver delays neither later sweeps nor other receivers.
 */
export class NotificationSender {
  private readonly timer = new DueTimer(() => this.fire());
  private running: Promise<void> = Promise.resolve();
  /** The attempts under way on this node, by notification id. */
  private readonly underWay = new Map<string, Promise<void>>();
  /** How many attempts are under way per receiver url. */
  private readonly perReceiver = new Map<string, number>();
  private stopped = false;
  private readonly abort = new AbortController();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly targetOf: TargetOf,
    private readonly metrics: Metrics,
  ) {}

  /** Reads the earliest notification and arms the timer. */
  async start(): Promise<void> {
    for await (const key of this.store.keys(OutboxRecord, { limit: 1 })) this.note(dueOf(key));
  }

  /** Makes sure a sweep runs no later than `at` (an ISO time; default now). */
  note(at = new Date().toISOString()): void {
    this.timer.note(at);
  }

  private fire(): void {
    this.running = this.running
      .then(() => this.sweep())
      .catch((err: unknown) => {
        if (!(err instanceof StorageFailure)) this.log.error({ err }, "notification sweep failed");
      });
  }

  /**
   * Starts an attempt at every due notification (a page at a time) not already under way and whose
   * receiver has room, then arms the timer for the next. It does not wait for the attempts.
   */
  private async sweep(): Promise<void> {
    const now = Date.now();
    let taken = 0;
    let next: string | undefined;
    for await (const [key, entry] of this.store.entries(OutboxRecord)) {
      if (this.stopped) return;
      if (Date.parse(dueOf(key)) > now || taken >= SWEEP_LIMIT) {
        next = dueOf(key);
        break;
      }
      const receiver = entry.url;
      if (this.underWay.has(entry.id)) continue;
      if ((this.perReceiver.get(receiver) ?? 0) >= RECEIVER_LIMIT) continue; // swept when one ends
      taken += 1;
      this.launch(key, entry, receiver);
    }
    if (next) this.note(next);
  }

  /** Runs one attempt on its own, counted against its receiver until it ends. */
  private launch(key: string, entry: OutboxEntry, receiver: string): void {
    this.perReceiver.set(receiver, (this.perReceiver.get(receiver) ?? 0) + 1);
    const run = this.attempt(key, entry)
      .catch((err: unknown) => {
        if (!(err instanceof StorageFailure))
          this.log.error({ err }, "notification attempt failed");
      })
      .finally(() => {
        this.underWay.delete(entry.id);
        const left = (this.perReceiver.get(receiver) ?? 1) - 1;
        if (left > 0) this.perReceiver.set(receiver, left);
        else this.perReceiver.delete(receiver);
        // Its receiver was full: what that left due can go now.
        if (left + 1 >= RECEIVER_LIMIT) this.note();
      });
    this.underWay.set(entry.id, run);
  }

  /**
   * One attempt at one notification, if this node claims it. The claim carries the tokens of the
   * answer links the attempt sends (written, synced, before the body is sent: a crash after it
   * leaves the links working and the notification due again after the claim).
   */
  private async attempt(key: string, entry: OutboxEntry): Promise<void> {
    if (this.stopped) return;
    const ref = this.targetOf(entry.owner, entry.url);
    const claimed = { ...entry, attempts: entry.attempts + 1 };
    if (!ref) {
      const claimKey = outboxKey(new Date(Date.now() + CLAIM_GRACE_MS).toISOString(), entry.id);
      if (await this.claim(this.taking(key, entry).put(OutboxRecord, claimKey, claimed))) {
        await this.giveUp(claimKey, {
          ...claimed,
          lastError: "its receiver is no longer configured",
        });
      }
      return;
    }
    const body = await this.current(entry);
    if (this.stopped) return;
    if (!body) {
      if (await this.claim(this.taking(key, entry))) {
        this.metrics.notification(entry.event, "superseded");
      }
      return;
    }
    const now = Date.now();
    const claimKey = outboxKey(
      new Date(now + ref.target.timeout + CLAIM_GRACE_MS).toISOString(),
      entry.id,
    );
    const claim = this.taking(key, entry).put(OutboxRecord, claimKey, claimed);
    const sent = withAnswerLinks(claim, ref.target, body, now);
    const links = sent.pending.some((call) => call.answer);
    if (!(await this.claim(claim, links))) return;
    const error = await deliver(ref.target, sent, this.abort.signal);
    if (error === undefined) {
      await this.store.batch().del(OutboxRecord, claimKey).write();
      this.metrics.notification(entry.event, "delivered");
      return;
    }
    if (this.stopped) return; // due again after the claim, on the next start
    const failed = { ...claimed, lastError: error };
    if (claimed.attempts >= ref.target.maxAttempts) {
      await this.giveUp(claimKey, failed);
      return;
    }
    this.metrics.notification(entry.event, "failed");
    const retryAt = new Date(Date.now() + retryDelay(ref.target, claimed.attempts)).toISOString();
    await this.store
      .batch()
      .del(OutboxRecord, claimKey)
      .put(OutboxRecord, outboxKey(retryAt, entry.id), failed)
      .write();
    this.note(retryAt);
  }

  /** A batch that takes `entry` from `key`, if no other node took it since it was read. */
  private taking(key: string, entry: OutboxEntry): StoreBatch {
    return this.store
      .batch()
      .check(
        OutboxRecord,
        key,
        (current) => current?.attempts === entry.attempts,
        "the notification",
      )
      .del(OutboxRecord, key);
  }

  /** Writes a batch made by `taking`; false when another node took the notification first. */
  private async claim(batch: StoreBatch, sync = false): Promise<boolean> {
    try {
      await batch.write(sync ? { sync: true } : undefined);
      return true;
    } catch (err) {
      if (err instanceof ConflictError) return false;
      throw err;
    }
  }

  /** The body to send now: a parked reply's with only the calls still waiting; else as written. */
  private async current(entry: OutboxEntry): Promise<NotificationBody | undefined> {
    const body = JSON.parse(entry.body) as NotificationBody;
    if (entry.event !== "reply.parked") return body;
    const reply = await this.store.get(ReplyRecord, entry.sessionId);
    const waiting =
      reply?.replyId === entry.replyId
        ? new Set(pendingCalls(reply.message).map((c) => c.id))
        : new Set<string>();
    return stillPending(body, waiting);
  }

  /** Moves a notification to the dead letters. */
  private async giveUp(key: string, entry: OutboxEntry): Promise<void> {
    await this.store
      .batch()
      .del(OutboxRecord, key)
      .put(DeadLetterRecord, deadLetterKey(entry.tenant, entry.id), {
        ...entry,
        deadAt: new Date().toISOString(),
      })
      .write();
    this.metrics.notification(entry.event, "dead");
    this.log.warn(
      {
        session: entry.sessionId,
        reply: entry.replyId,
        delivery: entry.id,
        url: entry.url,
        attempts: entry.attempts,
        error: entry.lastError,
      },
      "notification given up after its last attempt",
    );
  }

  /** Stops sending: aborts the attempts under way (they are due again after their claim). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer.stop();
    this.abort.abort();
    await this.running;
    await Promise.all(this.underWay.values());
  }
}

/** The due time in an outbox key. */
function dueOf(key: string): string {
  return key.slice(0, key.indexOf("/"));
}
