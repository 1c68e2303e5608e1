import { setTimeout as sleep } from "node:timers/promises";
import { OutboxRecord } from "../../src/session/notifications/outbox-records.js";
import { LevelStore } from "../../src/store/level-store.js";
import {
  type NotificationReceiver,
  startNotificationReceiver,
} from "../helpers/notification-receiver.js";

/** How long no POST must come before the outbox is taken to be drained (past a claim's expiry). */
const QUIET_MS = 7_000;

/**
 * A receiver of the parks' notifications through the SIGKILLs: it fails one attempt in ten (so
 * that retries cross kills too) and remembers every call a POST listed as pending.
 */
export async function startNotificationWitness() {
  const receiver: NotificationReceiver = await startNotificationReceiver();
  receiver.answer = () => (Math.random() < 0.1 ? 500 : 200);
  const notified = new Set<string>();
  let lastPost = Date.now();
  const seen = receiver.received;
  const push = seen.push.bind(seen);
  seen.push = (...items) => {
    lastPost = Date.now();
    for (const item of items) for (const call of item.body.pending) notified.add(call.callId);
    return push(...items);
  };
  return {
    /** What the server's config names as its receiver. */
    target: {
      url: receiver.url,
      secret: "fault-harness-notification-secret",
      events: ["reply.parked"],
      timeout: "1s",
      firstRetry: "50ms",
      maxRetryDelay: "200ms",
    },
    /** Waits until no POST came for a while: every notification due was attempted. */
    async quiet(): Promise<void> {
      while (Date.now() - lastPost < QUIET_MS) await sleep(250);
    },
    /**
     * After the last server stopped: the outbox in `dataDir` is empty (every park's notification
     * was delivered, or found answered first), and every call still parked at the end was
     * listed by a POST. Returns the POSTs and the calls they listed.
     */
    async check(dataDir: string, parkedAtEnd: readonly string[], violations: string[]) {
      const store = new LevelStore(dataDir);
      await store.open();
      let left = 0;
      try {
        for await (const key of store.keys(OutboxRecord)) {
          left++;
          violations.push(`notification ${key} still in the outbox after the run`);
        }
      } finally {
        await store.close();
      }
      if (notified.size === 0) violations.push("no park was notified");
      for (const call of parkedAtEnd) {
        if (!notified.has(call)) violations.push(`parked call ${call} was never notified`);
      }
      await receiver.close();
      return { posts: seen.length, notifiedCalls: notified.size, outboxLeft: left };
    },
  };
}
