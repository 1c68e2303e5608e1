import type { CountGuard } from "./tenant-session-count.js";
import { chmod, mkdir, rmdir } from "node:fs/promises";
import path from "node:path";
import type { AgentDefinition } from "../agent/agent.js";
import { invalidArgument, ParkwayError } from "../common/errors.js";
import { newId } from "../common/ids.js";
import type { Store } from "../store/store.js";
import {
  type ExternalToolSpec,
  type SessionData,
  SessionRecord,
  TenantCountRecord,
  TenantSessionRecord,
  tenantSessionKey,
} from "./records.js";

/** What a new session is created with. */
export interface CreateSessionInput {
  agentId: string;
  externalTools: ExternalToolSpec[];
  mode?: SessionData["mode"];
  /**
   * Absolute directories inside the agent's, for an agent that shares its directories; empty = the
   * agent's own, or the session's own directories for an agent that does not share them.
   */
  workingDirectories: string[];
  metadata?: Record<string, unknown>;
}

/**
 * The record of a new session of `agent` (undefined: the id asked for is not configured), or
 * INVALID_ARGUMENT naming the field that is wrong: among them an external tool named like one of
 * the agent's own tools (built-in, custom, configured or MCP), which would take its place. For an
 * agent that does not share its working directories, the session's are `<dir>/<session id>` for
 * each of the agent's; they do not exist until `makeSessionDirectories` creates them.
 */
export function newSession(
  tenant: string,
  agent: AgentDefinition | undefined,
  known: readonly string[],
  input: CreateSessionInput,
  /** Fields every write of a session record sets (see `SessionHead`). */
  stamp: Partial<SessionData> = {},
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
  input.externalTools.forEach((tool, i) => {
    if (agent.tools.has(tool.name)) {
      throw invalidArgument([
        {
          field: `external_tools[${i}].name`,
          description: `collides with ${tool.name}, a tool of agent ${agent.id}; an external tool needs a name of its own`,
        },
      ]);
    }
  });
  const id = newId("ses");
  const now = new Date().toISOString();
  return {
    id,
    tenant,
    agentId: agent.id,
    status: "idle",
    ...(input.mode ? { mode: input.mode } : {}),
    workingDirectories: workingDirectories(agent, id, input.workingDirectories),
    externalTools: input.externalTools,
    ...(input.metadata ? { metadata: input.metadata } : {}),
    createdAt: now,
    updatedAt: now,
    lastSeq: 0,
    messageCount: 0,
    ...stamp,
  };
}

/**
 * The session's directories. An agent that shares its directories: each one asked for must be
 * absolute and inside one of the agent's, and none asked for = the agent's. Otherwise the session's
 * own, `<dir>/<session id>` for each of the agent's, and asking for any is refused (the client cannot
 * know the session id beforehand).
 */
function workingDirectories(
  agent: AgentDefinition,
  sessionId: string,
  dirs: readonly string[],
): string[] {
  if (!agent.shareWorkingDirectories) {
    if (dirs.length > 0) {
      throw invalidArgument([
        {
          field: "working_directories",
          description: `must be empty: agent ${agent.id} gives each session its own directory inside each of its working directories; an agent with shareWorkingDirectories set lets sessions choose directories inside its own`,
        },
      ]);
    }
    return agent.workingDirectories.map((dir) => path.join(dir, sessionId));
  }
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

/**
 * Creates the session's own working directories (mode 0700, each inside one of the agent's), unless
 * the agent shares its directories. When one cannot be created, removes those it made and throws
 * INTERNAL naming the directory and the reason.
 */
export async function makeSessionDirectories(
  agent: AgentDefinition,
  session: SessionData,
): Promise<void> {
  if (agent.shareWorkingDirectories) return;
  const made: string[] = [];
  for (const dir of session.workingDirectories) {
    try {
      await mkdir(dir, { mode: 0o700 });
      made.push(dir);
      // mkdir's mode is narrowed by the umask; chmod makes it exactly 0700.
      await chmod(dir, 0o700);
    } catch (err) {
      await removeSessionDirectories(agent, { ...session, workingDirectories: made });
      throw new ParkwayError(
        "internal",
        `cannot create the working directory ${dir} of the new session: ${(err as Error).message}`,
        {},
        { cause: err },
      );
    }
  }
}

/**
 * Removes the session's own working directories when they are still empty (a session whose record
 * could not be written); never removes the agent's shared directories or any file.
 */
export async function removeSessionDirectories(
  agent: AgentDefinition,
  session: SessionData,
): Promise<void> {
  if (agent.shareWorkingDirectories) return;
  await Promise.all(session.workingDirectories.map((dir) => rmdir(dir).catch(() => undefined)));
}

/**
 * Stores a new session: its directories first (unless its agent shares them), then its record,
 * its entry in its tenant's list and the tenant's new count `tenantCount`, in one synced write.
 * When either fails, nothing is left: the directories made are removed.
 */
export async function storeNewSession(
  store: Store,
  agent: AgentDefinition,
  data: SessionData,
  tenantCount: number,
  guard: CountGuard,
): Promise<void> {
  await makeSessionDirectories(agent, data);
  try {
    const batch = store.batch();
    guard(batch);
    await batch
      .put(SessionRecord, data.id, data)
      .put(TenantSessionRecord, tenantSessionKey(data.tenant, data.id), { sessionId: data.id })
      .put(TenantCountRecord, data.tenant, { sessions: tenantCount })
      .write({ sync: true });
  } catch (err) {
    await removeSessionDirectories(agent, data);
    throw err;
  }
}
