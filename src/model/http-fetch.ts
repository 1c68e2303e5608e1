import { Agent, type Dispatcher } from "undici";
import { aborted, StreamedBody } from "./streamed-body.js";

/** Final statuses whose response has no body (a `Response` refuses one); 1xx are skipped. */
const NO_BODY = new Set([204, 205, 304]);

type RawHeaders = Record<string, string | string[] | undefined>;

function headersOf(raw: RawHeaders): Headers {
  const headers = new Headers();
  for (const name in raw) {
    const value = raw[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.append(name, value);
  }
  return headers;
}

/** The request's body, or the error that refuses it. */
function bodyOf(init: RequestInit | undefined): string | Uint8Array | undefined | TypeError {
  const body = init?.body;
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string" || body instanceof Uint8Array) return body;
  return new TypeError("a model request's body must be a string or bytes");
}

/** The request's headers as a plain object; a plain object is used as it is. */
function plainHeaders(given: RequestInit["headers"]): Record<string, string> {
  if (given === undefined) return {};
  if (given instanceof Headers || Array.isArray(given)) {
    const headers: Record<string, string> = {};
    const all = given instanceof Headers ? given : new Headers(given);
    all.forEach((value, name) => (headers[name] = value));
    return headers;
  }
  return given as Record<string, string>;
}

/** Where a request goes: the URL's origin and its path with the query. */
interface Target {
  origin: string;
  path: string;
}

/** Most targets kept: a model client asks for one URL, or a few. */
const TARGETS_KEPT = 16;

/** The target of each URL asked for, parsed once. */
function targets(): (input: string | URL | Request) => Target {
  const known = new Map<string, Target>();
  return (input) => {
    const href = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    let target = known.get(href);
    if (!target) {
      const url = new URL(href);
      target = { origin: url.origin, path: `${url.pathname}${url.search}` };
      if (known.size >= TARGETS_KEPT) known.clear();
      known.set(href, target);
    }
    return target;
  };
}

/**
 * A streamed answer (2xx, `text/event-stream`) as a `Response` whose `body` is the answer's bytes
 * as they are read (see `completionChunks`): a WHATWG stream in between would cost more per chunk
 * than the chunk's own handling. Its `headers` are made when first read.
 */
function streamedResponse(
  status: number,
  statusText: string,
  raw: RawHeaders,
  body: StreamedBody,
): Response {
  const response = new Response(null, { status, statusText });
  let headers: Headers | undefined;
  Object.defineProperties(response, {
    body: { value: body },
    headers: { get: () => (headers ??= headersOf(raw)) },
  });
  return response;
}

/** Errors of a request sent on a kept-alive connection the server had closed meanwhile. */
const STALE_CONNECTION = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE"]);

/**
 * Whether `err` ended a request that got no answer on a connection that had carried answers before
 * (the server closed it as it was taken): undici's socket errors say how much the socket read.
 */
function staleConnection(err: Error): boolean {
  const e = err as Error & { code?: string; socket?: { bytesRead?: number } };
  return STALE_CONNECTION.has(e.code ?? "") && (e.socket?.bytesRead ?? 0) > 0;
}

/** What one request needs: where, what, the signal that may end it and how long its headers may take. */
interface Outgoing {
  target: Target;
  method: string;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
  signal: AbortSignal | undefined;
  headersTimeout: number;
}

/** A model request's options: `fetch`'s, and how long the answer's headers may take once sent. */
export interface ModelRequestInit extends RequestInit {
  /**
   * Milliseconds from the request's end to the answer's headers before it fails with undici's
   * `HeadersTimeoutError` (code `UND_ERR_HEADERS_TIMEOUT`); none when absent or 0.
   */
  headersTimeoutMs?: number;
}

/** A `fetch` for model requests (`modelFetch`). */
export type ModelFetch = (
  input: string | URL | Request,
  init?: ModelRequestInit,
) => Promise<Response>;

/** Codes of undici's errors for a connection or an answer's headers that took too long. */
const TIMEOUTS = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_CONNECT_TIMEOUT"]);

/** Whether a request failed because its connection or its answer's headers took too long. */
export function timedOut(err: unknown): boolean {
  return TIMEOUTS.has((err as { code?: string } | undefined)?.code ?? "");
}

/**
 * How long a kept-alive connection may sit unused before it is closed: under the 5 s after which
 * Node's servers (and many others) close an idle one, so a request is seldom sent on a connection
 * the server is closing at that moment. A server's `Keep-Alive: timeout=` hint is followed, less 2 s.
 */
const IDLE_MS = 4_000;

/**
 * A `fetch` over undici's dispatcher, for model requests (`chatRequest`): one model call's request
 * and streamed answer handed from the connection's parser straight to the reader, without the
 * WHATWG fetch machinery or Node streams, which cost more CPU per call and per streamed chunk than
 * the call's own work. It supports what is sent to a model: a method, headers, a string or bytes
 * body, an abort signal, which ends the request or, after the headers, the body with an
 * `AbortError`, and a time limit for the answer's headers (`headersTimeoutMs`). No redirects, no
 * content decoding (none is asked for), no limit on the body's pace (the model's own watch has
 * one). A new connection may take `connectTimeoutMs` (10 s by default), then fails with undici's
 * `ConnectTimeoutError`. A request that fails on a reused connection before any answer (the server
 * closed it as it was taken) is sent again once on another one.
 */
export function modelFetch(options: { connectTimeoutMs?: number } = {}): ModelFetch {
  const agent = new Agent({
    keepAliveTimeout: IDLE_MS,
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { timeout: options.connectTimeoutMs ?? 10_000 },
  });
  const targetOf = targets();
  return (input, init) => {
    const signal = init?.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(aborted());
    const target = targetOf(input);
    const headers = plainHeaders(init?.headers);
    const body = bodyOf(init);
    if (body instanceof Error) return Promise.reject(body);
    const method = init?.method ?? "GET";
    const headersTimeout = init?.headersTimeoutMs ?? 0;
    return send({ target, method, headers, body, signal, headersTimeout }, agent, true);
  };
}

function send(out: Outgoing, agent: Dispatcher, mayRetry: boolean): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const { signal } = out;
    let controller: Dispatcher.DispatchController | undefined;
    let abortedEarly = false;
    // A streamed answer's body once its headers are in; any other answer's, a standard body.
    let streamed: StreamedBody | undefined;
    let other: ReadableStreamDefaultController<Uint8Array> | undefined;
    let answered = false;
    const onAbort = () => {
      if (streamed) streamed.destroy();
      else if (answered) controller?.abort(aborted());
      else {
        abortedEarly = true;
        controller?.abort(aborted());
        reject(aborted());
      }
    };
    const done = () => signal?.removeEventListener("abort", onAbort);
    signal?.addEventListener("abort", onAbort, { once: true });
    agent.dispatch(
      {
        origin: out.target.origin,
        path: out.target.path,
        method: out.method,
        headers: out.headers,
        body: out.body ?? null,
        headersTimeout: out.headersTimeout,
      },
      {
        onRequestStart(c) {
          controller = c;
          if (abortedEarly) c.abort(aborted());
        },
        onResponseStart(c, status, raw, statusMessage) {
          if (status < 200) return; // 1xx: the answer follows
          const type = raw["content-type"];
          const eventStream =
            status < 300 &&
            /^text\/event-stream/i.test(Array.isArray(type) ? (type[0] ?? "") : (type ?? ""));
          answered = true;
          if (eventStream) {
            streamed = new StreamedBody(c);
            resolve(streamedResponse(status, statusMessage ?? "", raw, streamed));
            return;
          }
          const init = { status, statusText: statusMessage ?? "", headers: headersOf(raw) };
          if (NO_BODY.has(status)) {
            resolve(new Response(null, init));
            return;
          }
          // Error answers are small: a standard body, read as they come (not paused).
          const body = new ReadableStream<Uint8Array>({
            start: (sink) => void (other = sink),
            cancel: () => {
              other = undefined; // nothing more is taken
              c.abort(aborted());
            },
          });
          resolve(new Response(body, init));
        },
        onResponseData(_c, chunk) {
          if (streamed) streamed.push(chunk);
          else other?.enqueue(chunk);
        },
        onResponseEnd() {
          done();
          if (streamed) streamed.end();
          else other?.close();
          other = undefined;
        },
        onResponseError(_c, err) {
          done();
          const failed = signal?.aborted ? aborted() : err;
          if (streamed) streamed.fail(failed);
          else if (answered) {
            other?.error(failed);
            other = undefined;
          } else if (abortedEarly || signal?.aborted) reject(aborted());
          else if (mayRetry && staleConnection(err)) resolve(send(out, agent, false));
          else reject(err);
        },
      },
    );
  });
}
