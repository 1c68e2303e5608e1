import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { type Logger, silentLogger } from "../../common/logger.js";
import { type ChatRequest, chatRequestSchema, messageText } from "./chat-request.js";
import { drained, readJsonBody, sendError, sendJson, writeAndFlush } from "./http-io.js";
import { renderTurn } from "./render-turn.js";
import {
  DEFAULT_CHUNK_SIZE,
  type Script,
  type Turn,
  type TurnFailure,
  loadScript,
  parseScript,
} from "./script.js";
import { selectTurn } from "./select-turn.js";

export interface ScriptedModelOptions {
  /** The script, or the path of a JSON script file. */
  script: Script | string;
  /** `HOST:PORT` to listen on; default `127.0.0.1:0` (loopback, a free port). */
  listen?: string;
  log?: Logger;
  /**
   * How many of the latest request bodies `requests` keeps (default 1000); older ones are dropped,
   * so a long load test holds a bounded amount of memory.
   */
  keepRequests?: number;
}

/** Request bodies kept by default. */
export const DEFAULT_KEEP_REQUESTS = 1000;

/** A running scripted model: an OpenAI-compatible HTTP server that plays a script. */
export interface ScriptedModelServer {
  /** The base URL ending in `/v1`, to pass as the openai client's `baseURL`. */
  readonly url: string;
  /**
   * The latest chat completion request bodies received (failed attempts included), oldest first: at
   * most `keepRequests` of them.
   */
  readonly requests: readonly ChatRequest[];
  /**
   * The W3C `traceparent` header of each of `requests` ("" when it had none), in the same order:
   * what a traced caller carried onward.
   */
  readonly traceparents: readonly string[];
  /** The index of each turn answered normally, in order (failed attempts are not counted). */
  readonly played: readonly number[];
  /** Requests being answered right now; a disconnected client is no longer counted. */
  readonly inFlight: number;
  /** Forgets requests, played turns and failure counts, and optionally switches to a new script. */
  reset(script?: Script | string): Promise<void>;
  /** Stops listening and drops every open connection. */
  close(): Promise<void>;
}

const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
};

/** Each turn as JSON when it holds `{{last_user}}`, "" when not: a turn is serialized once. */
const templates = new WeakMap<Turn, string>();

/**
 * The turn with `{{last_user}}` in its text and tool call inputs replaced by the text of the
 * request's last user message (JSON-escaped inside inputs), so one turn can answer many messages.
 */
function withLastUser(turn: Turn, request: ChatRequest): Turn {
  let serialized = templates.get(turn);
  if (serialized === undefined) {
    const json = JSON.stringify(turn);
    serialized = json.includes("{{last_user}}") ? json : "";
    templates.set(turn, serialized);
  }
  if (serialized === "") return turn;
  const last = [...request.messages].reverse().find((m) => m.role === "user");
  const text = last ? messageText(last) : "";
  const escaped = JSON.stringify(text).slice(1, -1);
  return JSON.parse(serialized.replaceAll("{{last_user}}", escaped)) as Turn;
}

/**
 * Starts an OpenAI-compatible server that answers `POST /v1/chat/completions` (streamed as SSE or as
 * one object) with the script's turns and lists the script's model at `GET /v1/models`. For test
 * runners in other languages, `GET /_scripted/requests` returns the latest requests received and
 * `POST /_scripted/reset` (body: a script) starts over with a new script. A request
 * when no turn is left gets a 400 error naming that. Listens on loopback unless told otherwise.
 */
export async function startScriptedModel(
  options: ScriptedModelOptions,
): Promise<ScriptedModelServer> {
  const log = options.log ?? silentLogger;
  const { host, port } = parseListen(options.listen ?? "127.0.0.1:0");
  let script = await resolveScript(options.script);
  const requests: ChatRequest[] = [];
  const traceparents: string[] = [];
  const keepRequests = options.keepRequests ?? DEFAULT_KEEP_REQUESTS;
  const played: number[] = [];
  const playedSet = new Set<number>();
  const failures = new Map<number, number>();
  let callCounter = 0;
  let responseCounter = 0;
  let inFlight = 0;
  const startedAt = Math.floor(Date.now() / 1000);

  async function chat(req: IncomingMessage, res: ServerResponse, signal: AbortSignal) {
    const body = await readJsonBody(req);
    if (!body.ok) return sendError(res, body.status, body.message);
    const parsed = chatRequestSchema.safeParse(body.value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.join(".") || "body";
      return sendError(res, 400, `invalid request: ${where}: ${issue?.message ?? "invalid"}`);
    }
    const request = parsed.data;
    requests.push(request);
    const traceparent = req.headers.traceparent;
    traceparents.push(typeof traceparent === "string" ? traceparent : "");
    if (requests.length > keepRequests) {
      requests.splice(0, requests.length - keepRequests);
      traceparents.splice(0, traceparents.length - keepRequests);
    }
    const stream = request.stream === true;
    const index = selectTurn(script, playedSet, request);
    const turn = index === undefined ? undefined : script.turns[index];
    if (index === undefined || turn === undefined) {
      log.warn({ requests: requests.length }, "scripted model: the script has no turn left");
      const last = request.messages.at(-1);
      const ending = last
        ? `its last message is a ${last.role} message ${JSON.stringify(messageText(last).slice(0, 80))}`
        : "it has no message";
      const message = `the script has no turn left for this request (${playedSet.size} of ${script.turns.length} turns played; ${ending}, after ${request.messages.length - 1} more)`;
      return sendError(res, 400, message, "script_exhausted");
    }
    const failed = failures.get(index) ?? 0;
    const failure = turn.fail && failed < (turn.fail.times ?? Infinity) ? turn.fail : undefined;
    if (failure) failures.set(index, failed + 1);
    else {
      playedSet.add(index);
      played.push(index);
    }
    if (failure) log.debug({ turn: index, stream, failure: failureKind(failure) }, "failing turn");
    else log.debug({ turn: index, stream }, "playing turn");

    if (failure?.status !== undefined) {
      const headers: Record<string, string> = {};
      if (failure.retryAfterMs !== undefined) {
        headers["retry-after-ms"] = String(failure.retryAfterMs);
      }
      const message = failure.message ?? `scripted failure of turn ${index}`;
      return sendError(res, failure.status, message, null, headers);
    }
    if (failure?.stall) {
      res.writeHead(200, stream ? SSE_HEADERS : { "content-type": "application/json" });
      res.flushHeaders();
      return;
    }
    const rendered = renderTurn(withLastUser(turn, request), {
      id: `chatcmpl-scripted-${++responseCounter}`,
      created: Math.floor(Date.now() / 1000),
      model: script.model ?? request.model ?? "scripted",
      chunkSize: turn.chunkSize ?? script.defaults?.chunkSize ?? DEFAULT_CHUNK_SIZE,
      includeUsage: request.stream_options?.include_usage === true,
      promptChars: JSON.stringify(request.messages).length,
      nextCallId: () => `call_${++callCounter}`,
    });
    if (!stream) {
      if (failure) {
        res.writeHead(200, { "content-type": "application/json" });
        res.flushHeaders();
        res.destroy();
        return;
      }
      return sendJson(res, 200, rendered.completion);
    }
    await streamChunks(res, rendered.chunks, turnDelay(turn), failure?.cutAfterChunks, signal);
  }

  function turnDelay(turn: Turn): number {
    return turn.delayMs ?? script.defaults?.delayMs ?? 0;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://localhost").pathname.replace(/\/+$/, "");
    const controller = new AbortController();
    inFlight++;
    res.once("close", () => {
      inFlight--;
      // Only a response left unfinished has something to stop (an abort makes a DOMException).
      if (!res.writableFinished) controller.abort();
    });
    if (path === "/v1/chat/completions") {
      if (req.method !== "POST") return sendError(res, 405, `use POST for ${path}`);
      return chat(req, res, controller.signal);
    }
    if (path === "/v1/models") {
      if (req.method !== "GET") return sendError(res, 405, `use GET for ${path}`);
      const id = script.model ?? "scripted";
      const model = { id, object: "model", created: startedAt, owned_by: "parkway" };
      return sendJson(res, 200, { object: "list", data: [model] });
    }
    if (path === "/_scripted/requests") {
      if (req.method !== "GET") return sendError(res, 405, `use GET for ${path}`);
      return sendJson(res, 200, requests);
    }
    if (path === "/_scripted/reset") {
      if (req.method !== "POST") return sendError(res, 405, `use POST for ${path}`);
      const body = await readJsonBody(req);
      if (!body.ok) return sendError(res, body.status, body.message);
      try {
        reset(parseScript(body.value));
      } catch (err) {
        return sendError(res, 400, (err as Error).message, "invalid_script");
      }
      return sendJson(res, 200, { ok: true });
    }
    sendError(res, 404, `unknown path: ${req.method ?? "?"} ${path || "/"}`, "not_found");
  }

  /** Forgets requests, played turns and failures; switches script when one is given. */
  function reset(next?: Script): void {
    if (next !== undefined) script = next;
    requests.length = 0;
    traceparents.length = 0;
    played.length = 0;
    playedSet.clear();
    failures.clear();
    callCounter = 0;
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A client that disconnects while its body is being read is not an error of the server.
      if (req.destroyed && !req.complete) return;
      log.error({ err }, "scripted model: request failed");
      if (!res.headersSent) sendError(res, 500, "scripted model: internal error");
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;

  return {
    url: `http://${urlHost}:${address.port}/v1`,
    requests,
    traceparents,
    played,
    get inFlight() {
      return inFlight;
    },
    async reset(next) {
      reset(next === undefined ? undefined : await resolveScript(next));
    },
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/**
 * Writes SSE chunks `delayMs` apart, then `data: [DONE]`; with `cutAfter`, destroys the connection
 * after that many chunks instead. Stops as soon as the client disconnects. The headers go first,
 * on their own; a turn without a delay then goes out as fast as the connection takes it: its
 * chunks joined into pieces of up to `PIECE_CHARS`, the next written once the last is taken.
 */
async function streamChunks(
  res: ServerResponse,
  chunks: readonly object[],
  delayMs: number,
  cutAfter: number | undefined,
  signal: AbortSignal,
): Promise<void> {
  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();
  if (delayMs <= 0 && cutAfter === undefined) {
    await writeAtOnce(res, chunks, signal);
    return;
  }
  const count = Math.min(chunks.length, cutAfter ?? Infinity);
  for (let i = 0; i < count; i++) {
    if (i > 0 && delayMs > 0) await sleep(delayMs, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) return;
    await writeAndFlush(res, sseData(chunks[i]));
  }
  if (signal.aborted) return;
  if (cutAfter !== undefined) res.destroy();
  else res.end(SSE_DONE);
}

/** The most characters `writeAtOnce` joins into one write. */
const PIECE_CHARS = 16 * 1024;

const SSE_DONE = "data: [DONE]\n\n";
const sseData = (chunk: unknown) => `data: ${JSON.stringify(chunk)}\n\n`;

/** Every chunk and `[DONE]`, in writes of up to `PIECE_CHARS`, waiting for room when needed. */
async function writeAtOnce(
  res: ServerResponse,
  chunks: readonly object[],
  signal: AbortSignal,
): Promise<void> {
  let piece = "";
  for (const chunk of chunks) {
    piece += sseData(chunk);
    if (piece.length < PIECE_CHARS) continue;
    if (!res.write(piece)) await drained(res);
    piece = "";
    if (signal.aborted) return;
  }
  res.end(piece + SSE_DONE);
}

function failureKind(failure: TurnFailure): string {
  if (failure.status !== undefined) return `status ${failure.status}`;
  return failure.stall ? "stall" : `cut after ${failure.cutAfterChunks ?? 0} chunks`;
}

async function resolveScript(script: Script | string): Promise<Script> {
  return typeof script === "string" ? loadScript(script) : parseScript(script);
}

/** Splits `HOST:PORT` (IPv6 hosts in brackets); throws naming the value when it is not one. */
function parseListen(listen: string): { host: string; port: number } {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d+)$/.exec(listen);
  const port = Number(match?.[2]);
  if (!match?.[1] || !Number.isInteger(port) || port > 65535) {
    throw new Error(`invalid listen address ${JSON.stringify(listen)}: expected HOST:PORT`);
  }
  return { host: match[1].replace(/^\[(.*)\]$/, "$1"), port };
}
