import type { Logger } from "../../common/logger.js";
import type { McpServerConfig } from "../../config/mcp-schema.js";
import type { Tool } from "../tool.js";
import { type Backoff, McpConnection } from "./mcp-connection.js";
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
  /** Told the tools of a server that was not available at start, once it connects. */
  onLateTools?: (tools: Tool[]) => void;
}

/**
 * Connects to every server at once and waits for each first attempt. A server that fails is
 * logged and retried in the background; its tools are handed to `onLateTools` when it connects.
 * A listed tool whose name or schema cannot be offered to a model is left out with a warning.
 */
export async function startMcpServers(options: StartMcpServersOptions): Promise<McpServers> {
  const published = new Set<string>();
  const tools: Tool[] = [];
  let started = false;
  const connections = Object.entries(options.servers).map(([name, config]) => {
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
        for (const info of listed) {
          const toolName = mcpToolName(name, info.name);
          if (published.has(toolName)) continue;
          const problem = mcpToolProblem(name, info);
          if (problem !== undefined) {
            options.log.warn({ mcpServer: name, tool: info.name, problem }, "MCP tool left out");
            continue;
          }
          published.add(toolName);
          fresh.push(mcpTool(connection, info));
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
