import type { PolicyConfig } from "../config/policy-schema.js";
import type { Model } from "../model/model.js";
import type { PermissionMode } from "../permissions/index.js";
import type { Tool } from "../tools/tool.js";
import type { Rule } from "./types.js";

/**
 * The default of `maxBlockBytes`: 1 MiB, so that a block, a waiting call's input or an event that
 * carries one stays well under gRPC's default 4 MiB receive limit of every client.
 */
export const DEFAULT_MAX_BLOCK_BYTES = 1024 * 1024;

/** What happens to a parked call whose confirm timeout passes. */
export type ExpiryPolicy = "deny" | "interrupt";

/** A configured agent, resolved: its model and tools are live objects. */
export interface AgentDefinition {
  readonly id: string;
  readonly description: string;
  readonly systemPrompt: string;
  readonly model: Model;
  /** Every tool the agent may call, by name (builtins, custom tools, external tools). */
  readonly tools: ReadonlyMap<string, Tool>;
  readonly permissionMode: PermissionMode;
  /** Absolute, resolved directories its sessions' file tools and Bash are confined to. */
  readonly workingDirectories: readonly string[];
  /**
   * True: sessions work in `workingDirectories` themselves. False: each session works in its own
   * `<dir>/<session id>` inside each of them.
   */
  readonly shareWorkingDirectories: boolean;
  /** Most model calls in one reply. */
  readonly maxIters: number;
  /** How long a parked call waits; undefined = forever. */
  readonly confirmTimeoutMs?: number;
  readonly expiryPolicy: ExpiryPolicy;
  /** Most bytes of output a tool may produce. */
  readonly maxToolOutputBytes: number;
  /**
   * Most bytes one block the model streams may hold: a text or thinking block (cut with a marker)
   * or a tool call's input (dropped, and the call fails with an error the model reads). Default
   * `DEFAULT_MAX_BLOCK_BYTES`.
   */
  readonly maxBlockBytes?: number;
  /**
   * Most bytes a reply's message may hold (text, thinking, tool inputs and results, counted as
   * clients receive them): past it the model's output is cut, and the reply ends with ERROR
   * `reply_too_large`. Default `DEFAULT_MAX_REPLY_BYTES`.
   */
  readonly maxReplyBytes?: number;
  /** Rules declared in the configuration (source "config"), in effect for every session. */
  readonly rules: readonly Rule[];
  /**
   * Called before a reply's calls are decided or run when some name a tool the agent does not
   * have (yet): gives the sources that may supply it (an MCP server that was down at start) a
   * chance to come up at once. Resolves when they tried, or when `signal` aborts.
   */
  readonly awaitTools?: (names: readonly string[], signal: AbortSignal) => Promise<void>;
  /** Its external policy decision point; wins over its sessions' tenant's. */
  readonly policy?: PolicyConfig;
  /** The tenants' policy decision points, by tenant id, for sessions of an agent without one. */
  readonly tenantPolicies?: ReadonlyMap<string, PolicyConfig>;
}

/** The policy decision point that a session of `agent` for `tenant` asks, if any. */
export function policyFor(agent: AgentDefinition, tenant: string): PolicyConfig | undefined {
  return agent.policy ?? agent.tenantPolicies?.get(tenant);
}
