import { z } from "zod";
import { duration } from "./duration.js";
import { hasCredentials } from "./url-credentials.js";

/** What a notification is sent for. */
export const NOTIFICATION_EVENTS = ["reply.parked", "call.expired", "reply.ended"] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/**
 * One receiver of park notifications: Parkway POSTs a signed JSON body to `url` when a reply
 * parks (`reply.parked`), when a parked call expires (`call.expired`), and when a reply that had
 * parked ends (`reply.ended`). Delivery is at least once, from an outbox written with the park:
 * a failed attempt (no 2xx within `timeout`) is retried after `firstRetry`, doubling up to
 * `maxRetryDelay` with jitter, until `maxAttempts`; then it is a dead letter.
 */
export const notificationTargetSchema = z
  .strictObject({
    url: z
      .string()
      .refine((url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol), {
        message: "expected an http:// or https:// URL",
      })
      .refine((url) => !hasCredentials(url), {
        message:
          "a URL with a user name or password cannot be used: the signature (secret) authenticates Parkway",
      }),
    events: z
      .array(z.enum(NOTIFICATION_EVENTS))
      .min(1)
      .default([...NOTIFICATION_EVENTS]),
    /** The HMAC-SHA256 key of the `Parkway-Signature` header; at least 16 characters. */
    secret: z.string().min(16, "at least 16 characters"),
    timeout: duration({ min: 100, max: 300_000, text: ["100 ms", "5 minutes"] }).default(10_000),
    maxAttempts: z.number().int().min(1).max(100).default(10),
    firstRetry: duration({ min: 10, max: 3_600_000, text: ["10 ms", "1 hour"] }).default(1_000),
    maxRetryDelay: duration({ min: 10, max: 86_400_000, text: ["10 ms", "1 day"] }).default(
      600_000,
    ),
    /**
     * Answer links: each pending confirmation in a `reply.parked` notification gets a single-use
     * link, `<baseUrl>/answers/<token>`, that allows or denies the call with one POST, valid for
     * `ttl` from the attempt that delivers it (no longer than the call waits). `baseUrl` is where the
     * web port (`web.listen`) is reached from the receiver.
     */
    answerLinks: z
      .strictObject({
        baseUrl: z
          .string()
          .refine((url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol), {
            message: "expected an http:// or https:// URL",
          }),
        ttl: duration({ min: 10, max: 30 * 86_400_000, text: ["10 ms", "30 days"] }).default(
          3_600_000,
        ),
      })
      .optional(),
  })
  .superRefine((target, ctx) => {
    // Retries wait at most maxRetryDelay: a longer firstRetry would never be waited.
    if (target.firstRetry > target.maxRetryDelay) {
      ctx.addIssue({
        code: "custom",
        path: ["firstRetry"],
        message: `${target.firstRetry} ms is longer than maxRetryDelay (${target.maxRetryDelay} ms, 10 minutes unless set), which caps every wait`,
      });
    }
  });
export type NotificationTarget = z.infer<typeof notificationTargetSchema>;

/** The notification targets of an agent or a tenant; their urls differ. */
export const notificationsSchema = z
  .array(notificationTargetSchema)
  .superRefine((targets, ctx) => {
    const seen = new Set<string>();
    targets.forEach((t, i) => {
      if (seen.has(t.url)) {
        ctx.addIssue({ code: "custom", path: [i, "url"], message: `duplicate url ${t.url}` });
      }
      seen.add(t.url);
    });
  })
  .default([]);
