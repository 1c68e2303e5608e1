import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool as McpToolInfo } from "@modelcontextprotocol/sdk/types.js";

/** How long listing the tools may take, once the handshake is done. */
const CONNECT_TIMEOUT_MS = 30_000;

/** Every page of the server's tool list. */
export async function listAllTools(client: Client): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, {
      timeout: CONNECT_TIMEOUT_MS,
    });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/** Closes `client`, which may be closed already. */
export async function closeQuietly(client: Client): Promise<void> {
  try {
    await client.close();
  } catch {
    // already closed
  }
}
