import { APIError } from "openai/core/error";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";

const LF2 = Buffer.from("\n\n");
const CRLF2 = Buffer.from("\r\n\r\n");

/** The data of one event (its `data:` lines joined by newlines), or undefined when it has none. */
function dataOf(text: string): string | undefined {
  let data: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith("data:")) continue; // comments, `event:`, `id:`, `retry:`
    const value = line.charCodeAt(5) === 0x20 ? line.slice(6) : line.slice(5);
    data = data === undefined ? value : `${data}\n${value}`;
  }
  return data;
}

/**
 * Splits a byte stream into server-sent events. Events end at a blank line (`\n\n` or
 * `\r\n\r\n`); bytes are decoded once an event is whole, so a character split across reads is
 * kept. What follows the last blank line counts as an event too, as the OpenAI SDK reads it.
 */
export class SseDecoder {
  private rest: Buffer = Buffer.alloc(0);

  /** The data of the events that `piece` completes, in order. */
  push(piece: Uint8Array): string[] {
    const out: string[] = [];
    const bytes = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    const buf = this.rest.length > 0 ? Buffer.concat([this.rest, bytes]) : bytes;
    // The next `\n\n` and `\r\n\r\n` at or after `from`; each searched again only once passed, and
    // never again once absent, so a read is scanned once whatever the events it holds.
    let from = 0;
    let lf = buf.indexOf(LF2);
    let crlf = buf.indexOf(CRLF2);
    for (;;) {
      if (lf !== -1 && lf < from) lf = buf.indexOf(LF2, from);
      if (crlf !== -1 && crlf < from) crlf = buf.indexOf(CRLF2, from);
      const useLf = lf !== -1 && (crlf === -1 || lf < crlf);
      const end = useLf ? lf : crlf;
      if (end === -1) break;
      const data = dataOf(buf.toString("utf8", from, end));
      if (data !== undefined) out.push(data);
      from = end + (useLf ? LF2.length : CRLF2.length);
    }
    this.rest = buf.subarray(from);
    return out;
  }

  /** The data of the event the stream's end completes, if any. */
  end(): string[] {
    const last = this.rest.length > 0 ? dataOf(this.rest.toString("utf8")) : undefined;
    this.rest = Buffer.alloc(0);
    return last === undefined ? [] : [last];
  }
}

/** The data of every server-sent event in `body`, in order (see `SseDecoder`). */
export async function* sseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new SseDecoder();
  for await (const piece of body) yield* decoder.push(piece);
  yield* decoder.end();
}

/** How long the body may take to end after `[DONE]` before its connection is closed. */
const END_AFTER_DONE_MS = 10_000;

/**
 * Reads what follows `[DONE]` apart (the body's end), so the connection can be used again without
 * the reply waiting for it; a body that does not end within `END_AFTER_DONE_MS` is destroyed.
 */
function readToEnd(body: unknown, reads: AsyncIterator<Uint8Array>): void {
  const destroy = (body as { destroy?: () => void }).destroy;
  const timer =
    typeof destroy === "function"
      ? setTimeout(() => destroy.call(body), END_AFTER_DONE_MS).unref()
      : undefined;
  void (async () => {
    try {
      while (!(await reads.next()).done);
    } catch {
      // The answer is whole: what goes wrong after it is the connection's business.
    } finally {
      clearTimeout(timer);
    }
  })();
}

/**
 * The chunks of a streamed Chat Completions answer (`stream: true`), read from its server-sent
 * events as the OpenAI SDK reads them, given as the chunks each read of the body completes (one
 * step per read, not per chunk: a read under load brings many). `[DONE]` ends them (the rest of the
 * body is read apart, see `readToEnd`, so the connection can be used again), and an event carrying
 * `error` throws it as an `APIError` after the chunks before it. Reading the events here rather than
 * through the SDK's `Stream` saves most of the CPU a chunk costs: the SDK copies the unread bytes
 * each time it takes an event out of a read, which costs the square of the events a read brings.
 */
export async function* completionChunks(response: Response): AsyncGenerator<ChatCompletionChunk[]> {
  const body = response.body as unknown as AsyncIterable<Uint8Array> | null;
  if (!body) throw new Error("the model's streamed answer has no body");
  const reads = body[Symbol.asyncIterator]();
  const decoder = new SseDecoder();
  let reading = true;
  try {
    for (;;) {
      const next = await reads.next();
      const events = next.done ? decoder.end() : decoder.push(next.value);
      const chunks: ChatCompletionChunk[] = [];
      for (const data of events) {
        if (data.startsWith("[DONE]")) {
          reading = false;
          if (!next.done) readToEnd(body, reads);
          if (chunks.length > 0) yield chunks;
          return;
        }
        let chunk: ChatCompletionChunk & { error?: unknown };
        try {
          chunk = JSON.parse(data) as ChatCompletionChunk & { error?: unknown };
        } catch (err) {
          if (chunks.length > 0) yield chunks;
          throw err;
        }
        if (chunk.error) {
          if (chunks.length > 0) yield chunks;
          throw new APIError(undefined, chunk.error, undefined, response.headers);
        }
        chunks.push(chunk);
      }
      if (next.done) reading = false;
      if (chunks.length > 0) yield chunks;
      if (next.done) return;
    }
  } finally {
    // Left early (an error, or the reader stopped): the body is closed, as `for await` would.
    if (reading) await reads.return?.(undefined);
  }
}
