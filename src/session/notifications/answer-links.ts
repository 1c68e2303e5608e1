import { createHash, createHmac } from "node:crypto";
import { z } from "zod";
import type { NotificationTarget } from "../../config/notification-schema.js";
import { defineRecord } from "../../store/record.js";
import type { StoreBatch } from "../../store/store.js";
import type { NotificationBody } from "./notification-body.js";

/**
 * An answer link's token, stored hashed: key = SHA-256 of the token (hex), written with the
 * attempt that sends the link. The token itself is never stored: it is derived, when the
 * notification is sent, from the receiver's secret.
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

/**
 * The body this attempt sends, with an answer link on each pending confirmation, the hash of each
 * link's token put into `batch` (the attempt's claim, written before the body is sent). A link is
 * valid for `ttl` from this attempt, never past its call's own deadline (a call whose deadline has
 * passed gets none), and its token comes from the secret configured now: a link sent after the
 * secret changed works, and one sent before keeps working until it expires, as its hash is
 * stored. Each attempt writes its links again; the outbox never holds a token.
 */
export function withAnswerLinks(
  batch: StoreBatch,
  target: NotificationTarget,
  body: NotificationBody,
  now = Date.now(),
): NotificationBody {
  if (body.event !== "reply.parked") return body;
  const links = target.answerLinks;
  const base = links?.baseUrl.replace(/\/+$/, "");
  return {
    ...body,
    pending: body.pending.map((stored) => {
      const call = { ...stored };
      delete call.answer; // only what this attempt writes
      if (!links || call.waitsFor !== "confirm") return call;
      const deadline = call.expiresAt ? Date.parse(call.expiresAt) : Infinity;
      const until = Math.min(now + links.ttl, deadline);
      if (until <= now) return call;
      const expiresAt = new Date(until).toISOString();
      const token = answerToken(target.secret, body.id, call.callId);
      batch.put(AnswerTokenRecord, tokenHash(token), {
        tenant: body.tenant,
        sessionId: body.session,
        replyId: body.reply,
        callId: call.callId,
        expiresAt,
        origin: target.url,
      });
      return { ...call, answer: { url: `${base}/answers/${token}`, expiresAt } };
    }),
  };
}
