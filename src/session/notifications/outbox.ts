import type { NotificationTarget } from "../../config/notification-schema.js";
import { newId } from "../../common/ids.js";
import type { StoreBatch } from "../../store/store.js";
import { type NotificationFacts, notificationBody } from "./notification-body.js";
import { OutboxRecord, outboxKey } from "./outbox-records.js";

/** A configured receiver, with whose configuration declares it. */
export interface TargetRef {
  owner: { kind: "agent" | "tenant"; id: string };
  target: NotificationTarget;
}

/** The receivers of an agent's sessions in a tenant: the agent's, then the tenant's. */
export type TargetsFor = (agentId: string, tenant: string) => readonly TargetRef[];

/**
 * Writes notifications into the outbox: one record per receiver that wants the event, put into
 * the batch that stores what it tells of (the park, the expiry, the end), so a notification
 * exists exactly when its event does. The sender is woken once that batch is written.
 */
export class Outbox {
  constructor(
    readonly targetsFor: TargetsFor,
    private readonly wake: () => void,
  ) {}

  /** Puts the notifications of `facts` into `batch`; true when there was any. */
  stage(batch: StoreBatch, facts: NotificationFacts): boolean {
    let staged = false;
    const now = new Date().toISOString();
    for (const { owner, target } of this.targetsFor(facts.agent, facts.tenant)) {
      if (!target.events.includes(facts.event)) continue;
      const id = newId("ntf");
      const body = notificationBody(id, facts);
      batch.put(OutboxRecord, outboxKey(now, id), {
        id,
        event: facts.event,
        url: target.url,
        owner,
        tenant: facts.tenant,
        sessionId: facts.sessionId,
        replyId: facts.replyId,
        body: JSON.stringify(body),
        attempts: 0,
        createdAt: now,
      });
      staged = true;
    }
    return staged;
  }

  /** The batch with notifications was written: send them. */
  written(): void {
    this.wake();
  }
}
