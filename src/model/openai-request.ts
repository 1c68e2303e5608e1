import { setTimeout as sleep } from "node:timers/promises";
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from "openai/core/error";
import { type ModelFetch, timedOut } from "./http-fetch.js";

/** Where Chat Completions requests go, and how a failed attempt is retried. */
export interface ChatRequestPolicy {
  /** Base URL, e.g. https://api.openai.com/v1; requests go to `{baseURL}/chat/completions`. */
  baseURL: string;
  apiKey: string;
  /** Retries after the first attempt. */
  maxRetries: number;
  /**
   * How long an attempt may wait for the response's headers once its request is sent, in ms (its
   * connection's own limit is `fetch`'s).
   */
  timeoutMs: number;
  /** How a request is sent (`modelFetch`). */
  fetch: ModelFetch;
}

/** Sends a request body; resolves with the 2xx response once its headers are in. */
export type ChatRequest = (
  body: string,
  signal: AbortSignal,
  headers?: Record<string, string>,
) => Promise<Response>;

/** The longest wait a `retry-after-ms` or `retry-after` header is followed for. */
const MAX_RETRY_AFTER_MS = 60_000;

/** What an attempt that got no response ended with. */
interface NoResponse {
  failed: unknown;
  timedOut: boolean;
}

/**
 * POSTs Chat Completions request bodies with the openai SDK's retry policy and error classes,
 * without its per-request work (options merged and copied, headers built through its own `Headers`,
 * its debug log's details formatted whatever the log level, a promise per step), which costs a model
 * call about 100 µs of CPU before its request leaves. An attempt that fails to connect, gets no
 * headers within `timeoutMs`, or answers 408, 409, 429 or 5xx is retried up to `maxRetries` times;
 * a server's `x-should-retry: true|false` overrides the status. The wait before a retry is what
 * `retry-after-ms` or `retry-after` (seconds or an HTTP date) asks, up to a minute, else 0.5 s
 * doubling per retry up to 8 s, less up to a quarter at random. Failures are the SDK's: `APIError`
 * by status (`RateLimitError`, `InternalServerError`, ...) with the answer's `error` object,
 * `APIConnectionTimeoutError`, `APIConnectionError` naming the cause. An abort of `signal` ends
 * an attempt or a wait at once with `APIUserAbortError`; after the headers it ends the body.
 */
export function chatRequest(policy: ChatRequestPolicy): ChatRequest {
  const url = `${policy.baseURL.replace(/\/+$/, "")}/chat/completions`;
  const base: Record<string, string> = {
    authorization: `Bearer ${policy.apiKey}`,
    "content-type": "application/json",
    accept: "application/json",
    "user-agent": "parkway",
  };
  return async (body, signal, headers) => {
    const init = { method: "POST", headers: headers ? { ...base, ...headers } : base, body };
    for (let retry = 0; ; retry++) {
      const left = policy.maxRetries - retry;
      const response = await attempt(policy, url, init, signal);
      if (response instanceof Response) {
        if (response.ok) return response;
        if (left > 0 && retriable(response)) {
          // Read to the end, so that the connection is kept for the retry.
          await response.arrayBuffer().catch(() => undefined);
          await pause(retryAfter(response.headers) ?? backoff(retry), signal);
          continue;
        }
        throw await statusError(response);
      }
      if (left > 0) {
        await pause(backoff(retry), signal);
        continue;
      }
      if (response.timedOut) throw new APIConnectionTimeoutError();
      const cause = response.failed instanceof Error ? response.failed : undefined;
      throw new APIConnectionError({
        message: `Connection error${cause ? `: ${cause.message}` : "."}`,
        ...(cause ? { cause } : {}),
      });
    }
  };
}

/** One attempt: its response, or why it got none. */
async function attempt(
  policy: ChatRequestPolicy,
  url: string,
  init: RequestInit,
  signal: AbortSignal,
): Promise<Response | NoResponse> {
  if (signal.aborted) throw new APIUserAbortError();
  try {
    // The caller's abort ends this attempt, and its body once the headers are in.
    return await policy.fetch(url, { ...init, signal, headersTimeoutMs: policy.timeoutMs });
  } catch (failed) {
    if (signal.aborted) throw new APIUserAbortError();
    return { failed, timedOut: timedOut(failed) };
  }
}

function retriable(response: Response): boolean {
  const told = response.headers.get("x-should-retry");
  if (told === "true") return true;
  if (told === "false") return false;
  const { status } = response;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** The wait a response asks for before a retry, when it asks for one within a minute. */
function retryAfter(headers: Headers): number | undefined {
  let ms = Number.parseFloat(headers.get("retry-after-ms") ?? "");
  if (Number.isNaN(ms)) {
    const after = headers.get("retry-after");
    if (after !== null) {
      const seconds = Number.parseFloat(after);
      ms = Number.isNaN(seconds) ? Date.parse(after) - Date.now() : seconds * 1000;
    }
  }
  return ms >= 0 && ms <= MAX_RETRY_AFTER_MS ? ms : undefined;
}

/** 0.5 s doubling per retry up to 8 s, less up to a quarter at random. */
function backoff(retry: number): number {
  return Math.min(500 * 2 ** retry, 8_000) * (1 - Math.random() * 0.25);
}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    throw new APIUserAbortError();
  }
}

/** The SDK's error for a non-2xx answer: by status, with the answer's JSON or its text. */
async function statusError(response: Response): Promise<APIError> {
  const text = await response.text().catch((err: unknown) => (err as Error).message);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const message = json === undefined ? text : undefined;
  return APIError.generate(
    response.status,
    json as Record<string, unknown> | undefined,
    message,
    response.headers,
  );
}
