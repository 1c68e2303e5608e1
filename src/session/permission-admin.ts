import { decide, type PermissionState } from "../agent/gate.js";
import { parseToolInput } from "../agent/tool-input.js";
import type { DecisionInfo, Rule } from "../agent/types.js";
import { invalidArgument } from "../common/errors.js";
import type { Tool } from "../tools/tool.js";
import type { RuleScope } from "../permissions/index.js";
import { modeAudit, ruleAudit } from "./audit-entries.js";
import { writeAudit } from "./audit-records.js";
import type { RuleScopeKey, StoredRule } from "./rule-book.js";
import { toolsOf } from "./load-actor.js";
import { SessionActor } from "./session-actor.js";
import { SessionHead } from "./session-head.js";
import type { SessionManager } from "./session-manager.js";
import { SessionPermissions } from "./session-permissions.js";

/** A rule to add through the API, with where it applies. */
export interface RuleToAdd {
  rule: Rule;
  scope: RuleScope;
  sessionId?: string;
  agentId?: string;
}

/**
 * The permission administration of PermissionService: listing, adding and removing rules, setting
 * a session's mode, and explaining a decision without running anything.
 */
export class PermissionAdmin {
  constructor(
    private readonly sessions: SessionManager,
    private readonly tenant: string,
  ) {}

  private get book() {
    return this.sessions.rules(this.tenant);
  }

  /**
   * The permission state and tools of a session, from its actor when this node holds it, else as
   * stored: a read needs no lease, so it is not refused while another node serves the session.
   */
  private async inSession(
    sessionId: string,
  ): Promise<{ state: PermissionState; tools: ReadonlyMap<string, Tool> }> {
    const found = await this.sessions.peek(this.tenant, sessionId);
    if (found instanceof SessionActor) {
      return { state: await found.permissionState(), tools: found.tools };
    }
    const { data } = found;
    const agent = this.sessions.agentOf(data);
    const head = new SessionHead(data);
    const permissions = new SessionPermissions(head, agent, this.book, this.sessions.homeDir);
    return { state: await permissions.state(), tools: toolsOf(agent, data) };
  }

  /**
   * The rules in effect for a session (configured, tenant, agent and session scope), or the stored
   * rules of one scope; optionally only one scope.
   */
  async list(filter: { sessionId?: string; agentId?: string; scope?: RuleScope }): Promise<Rule[]> {
    const book = this.book;
    if (filter.sessionId) {
      const { state } = await this.inSession(filter.sessionId);
      return state.rules.filter((r) => !filter.scope || (r.scope ?? "session") === filter.scope);
    }
    switch (filter.scope) {
      case "tenant":
        return book.list({ scope: "tenant" });
      case "agent": {
        if (!filter.agentId) {
          throw invalidArgument([
            { field: "agent_id", description: "is required with scope AGENT" },
          ]);
        }
        const agent = this.sessions.agent(filter.agentId);
        return [...agent.rules, ...(await book.list({ scope: "agent", agentId: agent.id }))];
      }
      default:
        throw invalidArgument([
          {
            field: "session_id",
            description: "set a session, or a scope (with agent_id for AGENT)",
          },
        ]);
    }
  }

  /** Adds rules, de-duplicated per scope, in one atomic write. */
  async add(
    rules: RuleToAdd[],
    principal: string,
  ): Promise<{ stored: StoredRule[]; added: number }> {
    const prepared: { rule: Rule; key: RuleScopeKey }[] = [];
    for (const [i, r] of rules.entries()) {
      let key: RuleScopeKey;
      if (r.scope === "session") {
        if (!r.sessionId) {
          throw invalidArgument([
            { field: `rules[${i}].session_id`, description: "is required with scope SESSION" },
          ]);
        }
        await this.sessions.get(this.tenant, r.sessionId);
        key = { scope: "session", sessionId: r.sessionId };
      } else if (r.scope === "agent") {
        if (!r.agentId) {
          throw invalidArgument([
            { field: `rules[${i}].agent_id`, description: "is required with scope AGENT" },
          ]);
        }
        this.sessions.agent(r.agentId);
        key = { scope: "agent", agentId: r.agentId };
      } else {
        key = { scope: "tenant" };
      }
      prepared.push({
        key,
        rule: {
          ...r.rule,
          source: "api",
          createdBy: principal,
          createdAt: new Date().toISOString(),
        },
      });
    }
    return this.book.add(prepared, (batch, added) =>
      writeAudit(
        batch,
        this.tenant,
        added.map((rule) => ruleAudit("rule_added", rule, principal)),
      ),
    );
  }

  /** Removes a rule, recording who did. */
  remove(ruleId: string, principal: string): Promise<StoredRule> {
    if (!ruleId) throw invalidArgument([{ field: "rule_id", description: "is required" }]);
    return this.book.remove(ruleId, (batch, rule) =>
      writeAudit(batch, this.tenant, [ruleAudit("rule_removed", rule, principal)]),
    );
  }

  /**
   * Sets a session's mode (undefined follows the agent's), recording who did; it takes effect at
   * the session's next decision.
   */
  async setMode(sessionId: string, mode: PermissionState["mode"] | undefined, principal: string) {
    return this.sessions.withActor(sessionId, this.tenant, (actor) =>
      actor.serial(async () => {
        actor.head.setMode(mode);
        await actor.events.commit({
          sync: true,
          extra: (b) => writeAudit(b, this.tenant, [modeAudit(sessionId, mode, principal)]),
        });
        return actor.head.data.mode ?? actor.agent.permissionMode;
      }),
    );
  }

  /**
   * What the engine would decide for a call in a session, or for an agent: its mode and rules, with
   * the agent's working directories (those a session of an agent that shares them works in).
   */
  async explain(
    target: { sessionId?: string; agentId?: string },
    toolName: string,
    input: string,
  ): Promise<DecisionInfo> {
    let state: PermissionState;
    let tools;
    if (target.sessionId) {
      ({ state, tools } = await this.inSession(target.sessionId));
    } else if (target.agentId) {
      const agent = this.sessions.agent(target.agentId);
      const stored = [
        ...(await this.book.list({ scope: "tenant" })),
        ...(await this.book.list({ scope: "agent", agentId: agent.id })),
      ];
      state = {
        mode: agent.permissionMode,
        rules: [...agent.rules, ...stored],
        workingDirectories: agent.workingDirectories,
        homeDir: this.sessions.homeDir,
      };
      tools = agent.tools;
    } else {
      throw invalidArgument([
        { field: "session_id", description: "set a session_id or an agent_id" },
      ]);
    }
    const tool = tools.get(toolName);
    if (!tool) {
      throw invalidArgument([
        {
          field: "tool_name",
          description: `unknown tool ${JSON.stringify(toolName)}; tools: ${[...tools.keys()].join(", ")}`,
        },
      ]);
    }
    const parsed = parseToolInput(tool, toolName, input);
    if (!parsed.ok) throw invalidArgument([{ field: "input", description: parsed.error }]);
    return decide(
      { type: "tool_call", id: "explain", name: toolName, input, state: "pending" },
      tool,
      parsed.value,
      state,
    );
  }
}
