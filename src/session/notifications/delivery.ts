import { deadline } from "../../common/deadline.js";
import type { NotificationTarget } from "../../config/notification-schema.js";
import type { NotificationBody } from "./notification-body.js";
import { SIGNATURE_HEADER, signature } from "./signature.js";

/** The most of a receiver's answer read into a failure's reason. */
const MAX_ERROR_TEXT = 200;

/**
 * POSTs one notification: JSON, signed (`Parkway-Signature`), with its delivery id and event in
 * headers. Resolves undefined when the receiver answered 2xx within the target's timeout, else
 * why not (the status and the start of the answer, the timeout, or the connection error).
 */
export async function deliver(
  target: NotificationTarget,
  body: NotificationBody,
  signal: AbortSignal,
): Promise<string | undefined> {
  const text = JSON.stringify(body);
  const timestamp = Math.floor(Date.now() / 1000);
  const attempt = deadline(signal, target.timeout);
  try {
    const response = await fetch(target.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "parkway-notifications/1",
        "parkway-delivery": body.id,
        "parkway-event": body.event,
        [SIGNATURE_HEADER]: signature(target.secret, timestamp, text),
      },
      body: text,
      redirect: "manual",
      signal: attempt.signal,
    });
    if (response.ok) {
      await response.body?.cancel();
      return undefined;
    }
    const answer = (await response.text().catch(() => "")).slice(0, MAX_ERROR_TEXT);
    return `HTTP ${response.status}${answer ? `: ${answer}` : ""}`;
  } catch (err) {
    if (signal.aborted) return "the server stopped";
    if (attempt.timedOut()) return `no answer within ${target.timeout} ms`;
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : "";
    return `${err instanceof Error ? err.message : String(err)}${cause ? ` (${cause})` : ""}`;
  } finally {
    attempt.clear();
  }
}

/**
 * The wait before attempt `attempts + 1`: `firstRetry` doubled per attempt made, capped at
 * `maxRetryDelay`, with jitter (between half of it and all of it), so receivers that failed
 * together are not retried together.
 */
export function retryDelay(target: NotificationTarget, attempts: number): number {
  const full = Math.min(
    target.maxRetryDelay,
    target.firstRetry * 2 ** Math.min(30, Math.max(0, attempts - 1)),
  );
  return Math.round(full / 2 + Math.random() * (full / 2));
}
