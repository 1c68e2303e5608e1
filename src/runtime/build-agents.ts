import { realpath } from "node:fs/promises";
import path from "node:path";
import type { AgentDefinition } from "../agent/agent.js";
import { makeDirectory } from "../common/make-directory.js";
import { DEFAULT_MAX_REPLY_BYTES } from "../common/message-size.js";
import { bashEnvironment } from "../config/bash-env.js";
import type { AgentConfig } from "../config/agent-schema.js";
import { BASH_CONFIG_DEFAULT } from "../config/bash-schema.js";
import type { Config } from "../config/schema.js";
import type { Model } from "../model/model.js";
import { createOpenAIModel } from "../model/openai-model.js";
import type { Rule } from "../agent/types.js";
import { MAX_RULES_PER_SCOPE, parseRule, ruleProblems } from "../permissions/index.js";
import { createBashTool } from "../tools/bash.js";
import { externalTool } from "../tools/external-tool.js";
import type { Tool } from "../tools/tool.js";
import { AgentConfigError } from "./agent-config-error.js";
import type { AgentMcp } from "./agent-mcp.js";

export { AgentConfigError } from "./agent-config-error.js";

/** The agent used when the configuration declares none. */
export const DEFAULT_AGENT: AgentConfig = {
  id: "assistant",
  description: "A general assistant with the built-in tools.",
  systemPrompt: "You are a helpful assistant. Use the tools you are given when they help.",
  externalTools: [],
  permissionMode: "default",
  workingDirectories: ["./workspace"],
  shareWorkingDirectories: false,
  maxIters: 20,
  expiryPolicy: "deny",
  maxToolOutputBytes: 1_000_000,
  maxBlockBytes: 1024 * 1024,
  maxReplyBytes: DEFAULT_MAX_REPLY_BYTES,
  bash: BASH_CONFIG_DEFAULT,
  mcpServers: {},
  notifications: [],
  permissions: { allow: [], deny: [], ask: [] },
};

function configRules(agent: AgentConfig, index: number): Rule[] {
  const out: Rule[] = [];
  for (const behavior of ["allow", "deny", "ask"] as const) {
    agent.permissions[behavior].forEach((text, i) => {
      const rule = parseRule(text, behavior);
      if (!rule) {
        throw new AgentConfigError(
          `invalid config: agents[${index}].permissions.${behavior}[${i}]: ${JSON.stringify(text)} is not a rule such as "Bash(npm test:*)" or "Read"`,
        );
      }
      const problem = ruleProblems(rule)[0];
      if (problem) {
        throw new AgentConfigError(
          `invalid config: agents[${index}].permissions.${behavior}[${i}]: ${JSON.stringify(text)}: its ${problem.field === "tool_name" ? "tool name" : "content"} ${problem.description}`,
        );
      }
      out.push({ ...rule, source: "config", scope: "agent", agentId: agent.id });
    });
  }
  if (out.length > MAX_RULES_PER_SCOPE) {
    throw new AgentConfigError(
      `invalid config: agents[${index}].permissions: ${out.length} rules; an agent has at most ${MAX_RULES_PER_SCOPE} (allow, deny and ask together)`,
    );
  }
  return out;
}

async function resolveDirectories(
  agent: AgentConfig,
  index: number,
  made: string[] | undefined,
): Promise<string[]> {
  return Promise.all(
    agent.workingDirectories.map(async (dir, i) => {
      const absolute = path.resolve(dir);
      try {
        made?.push(...(await makeDirectory(absolute)));
        return await realpath(absolute);
      } catch (err) {
        throw new AgentConfigError(
          `invalid config: agents[${index}].workingDirectories[${i}]: cannot use ${absolute}: ${(err as Error).message}`,
        );
      }
    }),
  );
}

/**
 * Resolves the configured agents: their models (the agent's own, else `defaultModel`), their tools
 * (the named built-ins, or all, plus `customTools`; the built-in Bash is made per agent with the
 * environment and process limit of its `bash` config), and their working directories (created and
 * resolved to real paths). Agents with MCP servers are registered with `mcp`, whose `connect` adds
 * their tools to the agents' maps. The directories made for them are added to `madeDirectories`.
 */
export async function buildAgents(args: {
  config: Config;
  defaultModel: () => Promise<Model>;
  builtinTools: readonly Tool[];
  customTools?: readonly Tool[];
  mcp?: AgentMcp;
  madeDirectories?: string[];
}): Promise<Map<string, AgentDefinition>> {
  const { config } = args;
  const agents = config.agents.length > 0 ? config.agents : [DEFAULT_AGENT];
  const out = new Map<string, AgentDefinition>();
  const tenantPolicies = new Map(
    config.tenants.flatMap((t) => (t.policy ? [[t.id, t.policy] as const] : [])),
  );
  for (const [index, agent] of agents.entries()) {
    const builtins = new Map(args.builtinTools.map((t) => [t.name, t]));
    const chosen = agent.tools ?? [...builtins.keys()];
    const tools = new Map<string, Tool>();
    for (const [i, name] of chosen.entries()) {
      const tool = builtins.get(name);
      if (!tool) {
        throw new AgentConfigError(
          `invalid config: agents[${index}].tools[${i}]: unknown tool ${JSON.stringify(name)}; built-in tools: ${[...builtins.keys()].join(", ")}`,
        );
      }
      tools.set(
        name,
        name === "Bash"
          ? createBashTool({
              env: bashEnvironment(agent.bash),
              maxProcesses: agent.bash.maxProcesses,
            })
          : tool,
      );
    }
    for (const tool of args.customTools ?? []) tools.set(tool.name, tool);
    for (const spec of agent.externalTools) {
      tools.set(
        spec.name,
        externalTool({
          name: spec.name,
          description: spec.description,
          inputSchema: spec.inputSchema,
          ...(spec.metadataSchema ? { metadataSchema: spec.metadataSchema } : {}),
        }),
      );
    }
    const workingDirectories = await resolveDirectories(agent, index, args.madeDirectories);
    const awaitTools = args.mcp?.add(index, agent, workingDirectories[0]!, tools);
    const model = agent.model?.url
      ? createOpenAIModel({
          baseURL: agent.model.url,
          model: agent.model.name ?? "default",
          ...(agent.model.apiKey ? { apiKey: agent.model.apiKey } : {}),
          maxRetries: agent.model.maxRetries,
          timeoutMs: agent.model.timeout,
        })
      : await args.defaultModel();
    out.set(agent.id, {
      id: agent.id,
      description: agent.description,
      systemPrompt: agent.systemPrompt,
      model,
      tools,
      permissionMode: agent.permissionMode,
      workingDirectories,
      shareWorkingDirectories: agent.shareWorkingDirectories,
      maxIters: agent.maxIters,
      ...(agent.confirmTimeout === undefined ? {} : { confirmTimeoutMs: agent.confirmTimeout }),
      expiryPolicy: agent.expiryPolicy,
      maxToolOutputBytes: agent.maxToolOutputBytes,
      maxBlockBytes: agent.maxBlockBytes,
      maxReplyBytes: agent.maxReplyBytes,
      rules: configRules(agent, index),
      ...(agent.policy ? { policy: agent.policy } : {}),
      ...(tenantPolicies.size > 0 ? { tenantPolicies } : {}),
      ...(awaitTools ? { awaitTools } : {}),
    });
  }
  return out;
}
