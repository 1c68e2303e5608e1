/**
 * What the MCP SDK's stdio reader throws when one message outgrows its buffer (it then closes), and
 * what Parkway's reader of Streamable HTTP answers throws past the same size.
 */
const EXCEEDED = /(?:ReadBuffer|An answer) exceeded maximum size of (\d+) bytes/;

/**
 * Why the connection closed when `err` is a reader's overflow: a message from the server, in
 * practice a tool result, larger than Parkway reads; undefined for any other error.
 */
export function oversizedReason(err: unknown): string | undefined {
  const match = err instanceof Error ? EXCEEDED.exec(err.message) : null;
  if (!match) return undefined;
  const mib = Number(match[1]) / (1024 * 1024);
  return (
    `the server sent a message (a tool result) larger than ${Number.isInteger(mib) ? `${mib} MiB` : `${match[1]} bytes`}, ` +
    "the most Parkway reads from an MCP server; the connection was closed"
  );
}
