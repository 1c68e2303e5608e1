import { deadline } from "../../common/deadline.js";
import type { NotificationTarget } from "../../config/notification-schema.js";
import type { NotificationBody } from "./notification-body.js";
import { SIGNATURE_HEADER, signature } from "./signature.js";

/** The most bytes of a failed answer read into its reason (the rest is not read). */
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
    const answer = await startOf(response);
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
 * The start of a failed answer's body, for its reason: only its first MAX_ERROR_TEXT bytes are
 * read, and the rest is not waited for (a body may be huge, or never end).
 */
async function startOf(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  try {
    while (bytes < MAX_ERROR_TEXT) {
      const { done, value } = (await reader.read()) as { done: boolean; value?: Uint8Array };
      if (done || !value) break;
      chunks.push(value);
      bytes += value.byteLength;
    }
  } catch {
    // what came before the failure (or the timeout) is all there is
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  const text = Buffer.concat(chunks).subarray(0, MAX_ERROR_TEXT).toString("utf8");
  return text.replace(/\uFFFD$/, "");
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
