import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/**
 * What an MCP server's failures mean to a call: the server cannot be reached (the call fails, and
 * the connection is made again), or it answered something that is not a tool result (only that
 * call fails), and the words a reason is given in.
 */

/** Thrown by `McpConnection.call` when the server cannot be reached. */
export class McpUnavailableError extends Error {
  override readonly name = "McpUnavailableError";
}

/**
 * Thrown by `McpConnection.call` when the server answered with something that is not a tool result
 * as the protocol defines it; the connection stays up.
 */
export class McpInvalidResultError extends Error {
  override readonly name = "McpInvalidResultError";
}

/** A call refused because its Streamable HTTP session is gone (see `isSessionGone`). */
export class SessionGoneError extends McpUnavailableError {}

/**
 * Whether a Streamable HTTP server refused a request for its session: 404, which the protocol
 * says a server answers for a session it does not know (after a restart, say), or 400 naming
 * the session, which some servers answer instead. The server did not run the request.
 */
export function isSessionGone(err: unknown): boolean {
  if (!(err instanceof StreamableHTTPError)) return false;
  return err.code === 404 || (err.code === 400 && /session/i.test(err.message));
}

interface SchemaIssue {
  code?: string;
  path: PropertyKey[];
  message: string;
  errors?: SchemaIssue[][];
}

/** The SDK's rejection of a result that does not fit the protocol's schema (a zod error). */
export function isInvalidResult(err: unknown): err is Error & { issues: SchemaIssue[] } {
  return (
    err instanceof Error &&
    /^\$?ZodError$/.test(err.name) &&
    Array.isArray((err as { issues?: unknown }).issues)
  );
}

/**
 * The first problem of a result the schema refused, as `path: message`; for a part that fits none
 * of the kinds it may be, the problem of the kind it comes closest to (the fewest problems).
 */
export function resultProblem(err: { issues: SchemaIssue[] }, prefix: PropertyKey[] = []): string {
  const issue = err.issues[0];
  if (!issue) return "(no detail)";
  const at = [...prefix, ...issue.path];
  const closest = issue.errors?.filter((b) => b.length > 0).sort((a, b) => a.length - b.length)[0];
  if (issue.code === "invalid_union" && closest) return resultProblem({ issues: closest }, at);
  return `${at.length > 0 ? `${at.map(String).join(".")}: ` : ""}${issue.message}`.slice(0, 300);
}

/** An error's message, with the system's code when fetch hid it in the cause. */
export function message(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // fetch's "fetch failed" says why in its cause (ECONNREFUSED, …).
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? `${err.message} (${code})` : err.message;
}

/** `reason`, with the server's last output on stderr when there is some. */
export function withStderr(reason: string, stderr: string): string {
  return stderr === "" ? reason : `${reason}; its last output: ${stderr}`;
}
