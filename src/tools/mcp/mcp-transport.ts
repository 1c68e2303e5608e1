import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Logger } from "../../common/logger.js";
import type { McpServerConfig } from "../../config/mcp-schema.js";

/** How much of a stdio server's latest standard error is kept to explain a failure. */
const STDERR_TAIL_BYTES = 1024;

/** How long ending a Streamable HTTP session may take when Parkway disconnects. */
const END_SESSION_TIMEOUT_MS = 2000;

/**
 * Ends the session a Streamable HTTP transport holds at its server (HTTP DELETE), so the server can
 * free what it keeps for it; a server that does not answer in time, or at all, is left as it is.
 */
export async function endSession(transport: Transport): Promise<void> {
  if (!(transport instanceof StreamableHTTPClientTransport) || !transport.sessionId) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    transport.terminateSession().catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, END_SESSION_TIMEOUT_MS))),
  ]);
  clearTimeout(timer);
}

/** The most bytes of one answer Parkway reads from a server, as the SDK's stdio reader takes. */
export const MAX_ANSWER_BYTES = 10 * 1024 * 1024;

/**
 * fetch, with the body of each answer to a POST (a call's result, as JSON or as the events of a
 * stream) cut off with an error past MAX_ANSWER_BYTES, rather than read into memory whole. The
 * server's own event stream (GET) lives as long as the session and is not counted.
 */
const cappedFetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
  const response = await fetch(url, init);
  if (init?.method !== "POST" || !response.body) return response;
  let bytes = 0;
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        if (bytes > MAX_ANSWER_BYTES) {
          controller.error(
            new Error(`An answer exceeded maximum size of ${MAX_ANSWER_BYTES} bytes`),
          );
        } else controller.enqueue(chunk);
      },
    }),
  );
  return new Response(counted, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
};

/** A transport to one server, and the tail of what a stdio server wrote to its standard error. */
export interface OpenedTransport {
  transport: Transport;
  stderr: () => string;
}

/**
 * The transport for a configured server: a stdio server is started (by `Client.connect`) with
 * `env` as its whole environment and `cwd` as its directory, its standard error logged at debug
 * level; a Streamable HTTP server is reached at its URL with its headers.
 */
export function openTransport(
  config: McpServerConfig,
  context: { cwd: string; env: Record<string, string>; log: Logger },
): OpenedTransport {
  if (config.transport === "http") {
    const transport = new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: config.headers },
      fetch: cappedFetch,
    });
    return { transport, stderr: () => "" };
  }
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args,
    env: { ...context.env, ...config.env },
    cwd: context.cwd,
    stderr: "pipe",
  });
  let tail = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    context.log.debug({ stderr: text }, "MCP server output");
    tail = (tail + text).slice(-STDERR_TAIL_BYTES);
  });
  return { transport, stderr: () => tail.trim() };
}
