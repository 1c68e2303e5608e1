import type { AgentDefinition } from "../agent/agent.js";
import type { PermissionState } from "../agent/gate.js";
import type { Rule } from "../agent/types.js";
import type { RuleBook } from "./rule-book.js";
import type { SessionHead } from "./session-head.js";

/**
 * The permission state of one session: its mode (or the agent's), the configured rules with the
 * stored ones in effect for it, its working directories and the home directory `~` stands for.
 */
export class SessionPermissions {
  private rules: readonly Rule[] = [];

  constructor(
    private readonly head: SessionHead,
    private readonly agent: AgentDefinition,
    private readonly book: RuleBook,
    readonly homeDir: string,
  ) {}

  /** Loads the rules in effect for this session (stored and configured). */
  async refresh(): Promise<void> {
    const stored = await this.book.forSession(this.head.id, this.agent.id);
    this.rules = [...this.agent.rules, ...stored];
  }

  /** The state as last loaded; read at each decision of a running reply. */
  current(): PermissionState {
    const data = this.head.data;
    return {
      mode: data.mode ?? this.agent.permissionMode,
      rules: this.rules,
      workingDirectories: data.workingDirectories,
      homeDir: this.homeDir,
    };
  }

  /** The state a decision in this session sees now, with the rules loaded again. */
  async state(): Promise<PermissionState> {
    await this.refresh();
    return this.current();
  }
}
