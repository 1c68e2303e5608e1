import type { AgentDefinition } from "../agent/agent.js";
import { ParkwayError } from "../common/errors.js";
import { externalTool } from "../tools/external-tool.js";
import type { Tool } from "../tools/tool.js";
import { type ActorDeps, SessionActor } from "./session-actor.js";
import type { ReplyData, SessionData } from "./records.js";
import type { SessionReader } from "./session-reader.js";
import type { Lease } from "./session-leases.js";

/**
 * Reads a session from the store and makes its actor (see `actorOf`); FAILED_PRECONDITION when its
 * agent is no longer configured.
 */
export async function loadActor(
  reader: SessionReader,
  agents: ReadonlyMap<string, AgentDefinition>,
  sessionId: string,
  deps: (tenant: string) => ActorDeps,
  lease?: Lease,
): Promise<SessionActor> {
  const { data, reply } = await reader.read(sessionId);
  return actorOf(data, reply, agents, deps, lease);
}

/** The configured agent of a session; FAILED_PRECONDITION when it is no longer configured. */
export function agentOf(
  data: SessionData,
  agents: ReadonlyMap<string, AgentDefinition>,
): AgentDefinition {
  const agent = agents.get(data.agentId);
  if (!agent) {
    throw new ParkwayError(
      "failed_precondition",
      `session ${data.id} belongs to agent ${data.agentId}, which is no longer configured`,
    );
  }
  return agent;
}

/**
 * The tools of a session: its agent's, and the external tools the session declared. A declared tool
 * named like one of the agent's is left out and the agent's kept: CreateSession refuses such a name,
 * but a session stored before it did (or before an MCP server that came up later added its tools)
 * must not replace a built-in by a tool the gates judge as the client's own.
 */
export function toolsOf(agent: AgentDefinition, data: SessionData): ReadonlyMap<string, Tool> {
  const own = data.externalTools.filter((spec) => !agent.tools.has(spec.name));
  if (own.length === 0) return agent.tools;
  const declared = own.map((spec) =>
    externalTool({
      name: spec.name,
      description: spec.description,
      inputSchema: JSON.parse(spec.inputSchema) as Record<string, unknown>,
      ...(spec.metadataSchema
        ? { metadataSchema: JSON.parse(spec.metadataSchema) as Record<string, unknown> }
        : {}),
    }),
  );
  return new Map([...agent.tools, ...declared.map((t) => [t.name, t] as const)]);
}

/**
 * A session's actor from its record and reply as stored, with its tools (see `toolsOf`) and its
 * running or parked reply, loaded under `lease` with several nodes; FAILED_PRECONDITION when its
 * agent is no longer configured.
 */
export function actorOf(
  data: SessionData,
  reply: ReplyData | undefined,
  agents: ReadonlyMap<string, AgentDefinition>,
  deps: (tenant: string) => ActorDeps,
  lease?: Lease,
): SessionActor {
  const agent = agentOf(data, agents);
  const actor = new SessionActor(data, agent, deps(data.tenant), toolsOf(agent, data), lease);
  actor.restore(reply);
  return actor;
}
