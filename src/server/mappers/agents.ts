import type { AgentDefinition } from "../../agent/agent.js";
import { toolJsonSchema } from "../../tools/builtin.js";
import { type Agent, ExpiryPolicy } from "../../generated/parkway/v1/agent_service.js";
import { permissionMode } from "./enums.js";

/** Maps a configured agent to the wire. */
export function agentToPb(agent: AgentDefinition): Agent {
  return {
    id: agent.id,
    description: agent.description,
    model: agent.model.name,
    tools: [...agent.tools.values()].map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: JSON.stringify(toolJsonSchema(tool)),
      external: tool.external === true,
    })),
    permissionMode: permissionMode.toPb(agent.permissionMode),
    workingDirectories: [...agent.workingDirectories],
    maxIters: agent.maxIters,
    confirmTimeout:
      agent.confirmTimeoutMs === undefined
        ? undefined
        : {
            seconds: Math.floor(agent.confirmTimeoutMs / 1000),
            nanos: (agent.confirmTimeoutMs % 1000) * 1e6,
          },
    expiryPolicy:
      agent.expiryPolicy === "interrupt"
        ? ExpiryPolicy.EXPIRY_POLICY_INTERRUPT
        : ExpiryPolicy.EXPIRY_POLICY_DENY,
  };
}
