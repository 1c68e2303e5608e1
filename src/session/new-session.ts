import path from "node:path";
import type { AgentDefinition } from "../agent/agent.js";
import { invalidArgument } from "../common/errors.js";
import { newId } from "../common/ids.js";
import type { ExternalToolSpec, SessionData } from "./records.js";

/** What a new session is created with. */
export interface CreateSessionInput {
  agentId: string;
  externalTools: ExternalToolSpec[];
  mode?: SessionData["mode"];
  /** Absolute directories inside the agent's; empty = the agent's own. */
  workingDirectories: string[];
  metadata?: Record<string, unknown>;
}

/**
 * The record of a new session of `agent` (undefined: the id asked for is not configured), or
 * INVALID_ARGUMENT naming the field that is wrong.
 */
export function newSession(
  tenant: string,
  agent: AgentDefinition | undefined,
  known: readonly string[],
  input: CreateSessionInput,
): SessionData {
  if (!input.agentId) {
    throw invalidArgument([{ field: "agent_id", description: "is required" }]);
  }
  if (!agent) {
    throw invalidArgument([
      {
        field: "agent_id",
        description: `unknown agent ${JSON.stringify(input.agentId)}; known: ${known.join(", ")}`,
      },
    ]);
  }
  const now = new Date().toISOString();
  return {
    id: newId("ses"),
    tenant,
    agentId: agent.id,
    status: "idle",
    ...(input.mode ? { mode: input.mode } : {}),
    workingDirectories: workingDirectories(agent, input.workingDirectories),
    externalTools: input.externalTools,
    ...(input.metadata ? { metadata: input.metadata } : {}),
    createdAt: now,
    updatedAt: now,
    lastSeq: 0,
    messageCount: 0,
  };
}

/** The session's directories: each absolute and inside one of the agent's; none = the agent's. */
function workingDirectories(agent: AgentDefinition, dirs: readonly string[]): string[] {
  if (dirs.length === 0) return [...agent.workingDirectories];
  return dirs.map((dir, i) => {
    const resolved = path.resolve(dir);
    const inside = agent.workingDirectories.some(
      (root) => resolved === root || resolved.startsWith(root + path.sep),
    );
    if (!path.isAbsolute(dir) || !inside) {
      throw invalidArgument([
        {
          field: `working_directories[${i}]`,
          description: `must be an absolute path inside the agent's working directories (${agent.workingDirectories.join(", ")})`,
        },
      ]);
    }
    return resolved;
  });
}
