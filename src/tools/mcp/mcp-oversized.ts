/** What the MCP SDK's stdio reader throws when one message outgrows its buffer (it then closes). */
const READ_BUFFER_EXCEEDED = /ReadBuffer exceeded maximum size of (\d+) bytes/;

/**
 * Why the connection closed when `err` is the stdio reader's overflow: a message from the server,
 * in practice a tool result, larger than the reader takes; undefined for any other error.
 */
export function oversizedReason(err: unknown): string | undefined {
  const match = err instanceof Error ? READ_BUFFER_EXCEEDED.exec(err.message) : null;
  if (!match) return undefined;
  const mib = Number(match[1]) / (1024 * 1024);
  return (
    `the server sent a message (a tool result) larger than ${Number.isInteger(mib) ? `${mib} MiB` : `${match[1]} bytes`}, ` +
    "the most Parkway reads from a stdio server; the connection was closed"
  );
}
