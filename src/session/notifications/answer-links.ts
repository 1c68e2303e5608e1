import { createHash, createHmac } from "node:crypto";
import { z } from "zod";
import type { NotificationTarget } from "../../config/notification-schema.js";
import { defineRecord } from "../../store/record.js";
import type { StoreBatch } from "../../store/store.js";
import type { NotificationBody } from "./notification-body.js";

/**
 * An answer link's token, stored hashed: key = SHA-256 of the token (hex). The token itself is
 * never stored: it is derived, when the notification is sent, from the receiver's secret.
 */
export const AnswerTokenRecord = defineRecord({
  kind: "answer_token",
  version: 1,
  schema: z.object({
    tenant: z.string(),
    sessionId: z.string(),
    replyId: z.string(),
    callId: z.string(),
    expiresAt: z.string(),
    /** The receiver the link was sent to (the audit trail names it as the answer's origin). */
    origin: z.string(),
  }),
});
export type AnswerToken = z.infer<typeof AnswerTokenRecord.schema>;

/** The token of the link to answer `callId` of delivery `deliveryId`. */
export function answerToken(secret: string, deliveryId: string, callId: string): string {
  return createHmac("sha256", secret).update(`answer:${deliveryId}:${callId}`).digest("base64url");
}

/** What a token is stored under. */
export function tokenHash(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Stores the hashed tokens of the confirmations in `body`, when the target sends answer links. */
export function stageAnswerTokens(
  batch: StoreBatch,
  target: NotificationTarget,
  body: NotificationBody,
): void {
  const links = target.answerLinks;
  if (!links || body.event !== "reply.parked") return;
  const expiresAt = new Date(Date.now() + links.ttl).toISOString();
  for (const call of body.pending) {
    if (call.waitsFor !== "confirm") continue;
    const token = answerToken(target.secret, body.id, call.callId);
    batch.put(AnswerTokenRecord, tokenHash(token), {
      tenant: body.tenant,
      sessionId: body.session,
      replyId: body.reply,
      callId: call.callId,
      expiresAt,
      origin: target.url,
    });
    call.answer = { url: "", expiresAt };
  }
}

/** The body with each confirmation's answer link filled in (the token is not in the outbox). */
export function withAnswerLinks(
  target: NotificationTarget,
  body: NotificationBody,
): NotificationBody {
  const links = target.answerLinks;
  if (!links) return body;
  const base = links.baseUrl.replace(/\/+$/, "");
  return {
    ...body,
    pending: body.pending.map((call) =>
      call.answer
        ? {
            ...call,
            answer: {
              ...call.answer,
              url: `${base}/answers/${answerToken(target.secret, body.id, call.callId)}`,
            },
          }
        : call,
    ),
  };
}
