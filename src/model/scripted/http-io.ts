import type { IncomingMessage, ServerResponse } from "node:http";

/** The largest request body accepted. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** A request body parsed as JSON, or the HTTP status and message to answer with. */
export type JsonBody =
  { ok: true; value: unknown } | { ok: false; status: number; message: string };

/** Reads the whole request body and parses it as JSON. */
export async function readJsonBody(req: IncomingMessage): Promise<JsonBody> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req as AsyncIterable<Buffer>) {
    size += part.length;
    if (size > MAX_BODY_BYTES) {
      return { ok: false, status: 413, message: `request body exceeds ${MAX_BODY_BYTES} bytes` };
    }
    parts.push(part);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(parts).toString("utf8")) };
  } catch (err) {
    return {
      ok: false,
      status: 400,
      message: `request body is not JSON: ${(err as Error).message}`,
    };
  }
}

/** Answers with a JSON body. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Answers with an OpenAI-style error body: `{error: {message, type, param, code}}`. */
export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  code: string | null = null,
  headers: Record<string, string> = {},
): void {
  const error = { message, type: errorType(status), param: null, code };
  sendJson(res, status, { error }, headers);
}

/** Writes data and resolves once it is handed to the socket, or the connection is gone. */
export function writeAndFlush(res: ServerResponse, data: string): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("close", done);
      resolve();
    };
    res.once("close", done);
    res.write(data, done);
  });
}

/** Resolves once `res` can take more data ('drain'), or the connection is gone. */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("close", done);
      res.off("drain", done);
      resolve();
    };
    res.once("close", done);
    res.once("drain", done);
  });
}

/** The OpenAI error `type` for an HTTP status. */
function errorType(status: number): string {
  switch (status) {
    case 400:
    case 404:
    case 405:
    case 413:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 429:
      return "rate_limit_error";
    default:
      return status >= 500 ? "server_error" : "invalid_request_error";
  }
}
