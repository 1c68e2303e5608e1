import { isDeepStrictEqual } from "node:util";
import type { Tool as McpToolInfo } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../../common/logger.js";
import type { McpServerConfig } from "../../config/mcp-schema.js";
import type { Tool } from "../tool.js";
import type { Backoff } from "./mcp-backoff.js";
import { McpConnection } from "./mcp-connection.js";
import { mcpTool, mcpToolName, mcpToolProblem } from "./mcp-tool.js";

/** An agent's MCP servers, connected. */
export interface McpServers {
  /** The tools of the servers that connected at start. */
  readonly tools: readonly Tool[];
  readonly connections: readonly McpConnection[];
  /** Disconnects every server (stopping the processes of stdio servers). */
  close(): Promise<void>;
}

export interface StartMcpServersOptions {
  servers: Readonly<Record<string, McpServerConfig>>;
  /** stdio servers: their working directory and base environment. */
  cwd: string;
  env: Record<string, string>;
  log: Logger;
  backoff?: Backoff;
  clientVersion?: string;
  /**
   * Told the tools a server adds after start (a server not available at start, once it connects;
   * a tool it lists later), and the new versions of tools it lists again with another
   * description, schema or annotations: each replaces the tool of its name.
   */
  onLateTools?: (tools: Tool[]) => void;
}

/**
 * Connects to every server at once and waits for each first attempt. A server that fails is
 * logged and retried in the background; its tools are handed to `onLateTools` when it connects.
 * A listed tool whose name or schema cannot be offered to a model is left out with a warning.
 * Each listing (at every connection, and when the server says its list changed) replaces the last:
 * a tool is judged by its latest listing, and one the server no longer lists is not called.
 */
export async function startMcpServers(options: StartMcpServersOptions): Promise<McpServers> {
  /** The listing each published tool was made from, by Parkway name. */
  const published = new Map<string, McpToolInfo>();
  /** The listing of each tool left out (its name or schema cannot be offered), by Parkway name. */
  const leftOut = new Map<string, McpToolInfo>();
  const tools: Tool[] = [];
  let started = false;
  const connections = Object.entries(options.servers).map(([name, config]) => {
    /** The server's tools as it lists them now (those that can be offered), by its names. */
    const current = new Map<string, McpToolInfo>();
    const connection: McpConnection = new McpConnection({
      name,
      config,
      cwd: options.cwd,
      env: options.env,
      log: options.log,
      ...(options.backoff ? { backoff: options.backoff } : {}),
      ...(options.clientVersion ? { clientVersion: options.clientVersion } : {}),
      onConnected(listed) {
        const fresh: Tool[] = [];
        current.clear();
        for (const info of listed) {
          if (current.has(info.name)) continue; // listed twice: the first counts
          const toolName = mcpToolName(name, info.name);
          // Listed as before: kept as it is (its schema is compiled once, not at every listing).
          const before = published.get(toolName);
          if (before !== undefined && isDeepStrictEqual(before, info)) {
            current.set(info.name, before);
            continue;
          }
          const refused = leftOut.get(toolName);
          if (refused !== undefined && isDeepStrictEqual(refused, info)) continue;
          const problem = mcpToolProblem(name, info);
          if (problem !== undefined) {
            leftOut.set(toolName, info);
            options.log.warn({ mcpServer: name, tool: info.name, problem }, "MCP tool left out");
            continue;
          }
          leftOut.delete(toolName);
          current.set(info.name, info);
          published.set(toolName, info);
          fresh.push(mcpTool(connection, info, () => current.get(info.name)));
        }
        if (!started) tools.push(...fresh);
        else if (fresh.length > 0) options.onLateTools?.(fresh);
      },
    });
    return connection;
  });
  await Promise.all(connections.map((c) => c.start()));
  started = true;
  return {
    tools,
    connections,
    async close() {
      await Promise.all(connections.map((c) => c.close()));
    },
  };
}
