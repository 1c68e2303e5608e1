import type { Logger } from "../common/logger.js";
import { bashEnvironment } from "../config/bash-env.js";
import type { AgentDefinition } from "../agent/agent.js";
import type { AgentConfig } from "../config/agent-schema.js";
import type { McpServers } from "../tools/mcp/mcp-servers.js";
import type { Tool } from "../tools/tool.js";
import { AgentConfigError } from "./agent-config-error.js";

interface PendingAgent {
  index: number;
  agent: AgentConfig;
  /** The agent's first working directory, resolved. */
  cwd: string;
  /** The agent's tool map, which its MCP tools join. */
  tools: Map<string, Tool>;
  /** Its servers, once `connect` started them. */
  started: { servers?: McpServers };
}

/**
 * The MCP servers of the configured agents: registered while the agents are built, connected
 * (`connect`) once the port is bound, so that a port in use fails before any server starts. Their
 * tools join each agent's tool map; a server that comes up later adds its tools then.
 */
export class AgentMcp {
  private readonly pending: PendingAgent[] = [];
  private readonly started: McpServers[] = [];

  constructor(private readonly log: Logger) {}

  /**
   * Registers an agent whose `mcpServers` are to be connected. Returns, for an agent with servers,
   * its `awaitTools`: for calls of `mcp__<server>__…` tools it does not have, a server of theirs
   * that is down tries to connect at once (its tools join the map when it does).
   */
  add(
    index: number,
    agent: AgentConfig,
    cwd: string,
    tools: Map<string, Tool>,
  ): AgentDefinition["awaitTools"] {
    if (Object.keys(agent.mcpServers).length === 0) return undefined;
    const started: PendingAgent["started"] = {};
    this.pending.push({ index, agent, cwd, tools, started });
    return async (names, signal) => {
      const down = (started.servers?.connections ?? []).filter(
        (c) => !c.ready && names.some((name) => name.startsWith(`mcp__${c.name}__`)),
      );
      if (down.length === 0 || signal.aborted) return;
      let stop: (() => void) | undefined;
      const aborted = new Promise<void>((resolve) => {
        stop = resolve;
        signal.addEventListener("abort", stop, { once: true });
      });
      await Promise.race([Promise.all(down.map((c) => c.start())), aborted]);
      signal.removeEventListener("abort", stop!);
    };
  }

  /**
   * Connects every registered server at once and waits for each first attempt. Rejects with
   * `AgentConfigError` when a server's tool has the name of another tool of its agent.
   */
  async connect(): Promise<void> {
    const pending = this.pending.splice(0);
    if (pending.length === 0) return;
    // Loaded only when an agent has MCP servers: the SDK costs start-up time and memory.
    const { startMcpServers } = await import("../tools/mcp/mcp-servers.js");
    const problems: string[] = [];
    await Promise.all(
      pending.map(async ({ index, agent, cwd, tools, started }) => {
        /** The tools these servers put in the map. */
        const mine = new WeakSet<Tool>();
        const servers = await startMcpServers({
          servers: agent.mcpServers,
          cwd,
          env: bashEnvironment(agent.bash),
          log: this.log.child({ agent: agent.id }),
          onLateTools: (late) => {
            for (const tool of late) {
              const before = tools.get(tool.name);
              // A new tool, or the new version of one of these servers' tools (never another's).
              if (before === undefined || mine.has(before)) {
                mine.add(tool);
                tools.set(tool.name, tool);
              }
            }
          },
        });
        this.started.push(servers);
        started.servers = servers;
        for (const tool of servers.tools) {
          if (tools.has(tool.name)) {
            problems.push(
              `invalid config: agents[${index}].mcpServers: tool ${tool.name} is already a tool of the agent`,
            );
          } else {
            mine.add(tool);
            tools.set(tool.name, tool);
          }
        }
      }),
    );
    if (problems.length > 0) throw new AgentConfigError(problems.join("; "));
  }

  /** Disconnects every server connected so far (stopping stdio servers). */
  async close(): Promise<void> {
    await Promise.all(this.started.splice(0).map((servers) => servers.close()));
  }
}
