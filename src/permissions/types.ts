/**
 * The permission engine's vocabulary. The engine is pure: every fact it needs (rules, mode, working
 * directories, home directory) arrives in a `PermissionRequest`, and it answers with a `Decision`.
 */

/*
 * Each list below is the one definition of its words: the stored records, the configuration, the
 * agents and the mappings to the wire contract derive from it, so a new word is one edit here that
 * the compiler then follows everywhere else.
 */

/** What a rule or a decision does with a tool call. */
export const PERMISSION_BEHAVIORS = ["allow", "deny", "ask"] as const;
export type PermissionBehavior = (typeof PERMISSION_BEHAVIORS)[number];

/** Where a rule came from. */
export const RULE_SOURCES = ["suggested", "confirmation", "api", "config"] as const;
export type RuleSource = (typeof RULE_SOURCES)[number];

/** How far a rule reaches. */
export const RULE_SCOPES = ["session", "agent", "tenant"] as const;
export type RuleScope = (typeof RULE_SCOPES)[number];

/**
 * A permission rule, displayed as `ToolName(ruleContent)` (e.g. `Bash(npm test:*)`). Without
 * `ruleContent` it matches every call of the tool. Storage and provenance fields are added by the
 * layers that store rules; the engine reads only `toolName`, `ruleContent` and `behavior`.
 */
export interface PermissionRule {
  toolName: string;
  ruleContent?: string;
  behavior: PermissionBehavior;
  source?: RuleSource;
  scope?: RuleScope;
}

/** How the engine falls back when no rule decides. */
export const PERMISSION_MODES = [
  "default",
  "accept_edits",
  "explore",
  "bypass",
  "dont_ask",
] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

/** The built-in tools whose inputs the engine understands. */
export const BUILTIN_TOOL_NAMES = [
  "Bash",
  "Read",
  "Write",
  "Edit",
  "Glob",
  "Grep",
  "AskUser",
] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

/** A safety check: its ASK is bypass-immune (no allow rule clears it). */
export type SafetyCheck =
  | "safety.injection"
  | "safety.dangerous_command"
  | "safety.dangerous_path"
  | "safety.rm_root"
  | "safety.sed_script";

/** Stable id of the step that decided; clients and tests may branch on it. */
export type PermissionCheck =
  | "rule.deny"
  | "rule.ask"
  | "rule.allow"
  | "read_only"
  | "tool.ask_user"
  | "tool.invalid_input"
  | SafetyCheck
  | "working_directory.edit"
  | "custom_tool"
  | `mode.${PermissionMode}`;

/** The engine's verdict on one tool call. */
export interface Decision {
  behavior: PermissionBehavior;
  /** Why, for people: e.g. "denied by rule Bash(rm:*)", "dangerous command: rm -rf". */
  reason: string;
  /** The rule that decided, when a rule did. */
  rule?: PermissionRule;
  /** The step that decided. */
  check: PermissionCheck;
  /** True when a safety check decided (ASK, or DENY in dont_ask): no allow rule clears it. */
  bypassImmune: boolean;
  /** Rules that would allow similar calls: only on a non-safety ASK, behavior allow, source suggested. */
  suggestedRules: PermissionRule[];
}

/** The facts about paths the engine needs; all absolute, none read from the machine. */
export interface PathContext {
  /** Absolute directories the tools are confined to; the first is Bash's working directory. */
  workingDirectories: readonly string[];
  /** The home directory that `~` and `$HOME` stand for. */
  homeDir: string;
  /**
   * Where an absolute path really leads: symbolic links resolved (for a path that does not exist,
   * those of its nearest existing ancestor). Supplied by the caller, which may read the file
   * system; without it, paths are judged as written.
   */
  realPath?: (path: string) => string;
  /**
   * The names in a directory (links to it followed), or undefined when the path is not a
   * directory that can be read. Lets the check see what a wildcard matches, what `diff` compares
   * in a directory, and where a git repository's top is; without it, wildcards are judged as
   * written.
   */
  listDirectory?: (path: string) => readonly string[] | undefined;
  /**
   * The text of a small file (a git repository's settings), or undefined when there is none at
   * the path; throws `ProbeRefused` when one is there that cannot be read. Without it, git's
   * settings are not checked.
   */
  readSmallFile?: (path: string) => string | undefined;
  /**
   * Whether the file at a path (links followed) is a regular file with more than one hard link:
   * its other names may be outside the working directories, where it is the same file. Without
   * it, hard links are not seen.
   */
  hardLinked?: (path: string) => boolean;
  /**
   * The paths of the submodules (gitlinks) a git index holds, its object ids `idBytes` long, or
   * undefined when there is no index at the path; throws `ProbeRefused` when one is there that
   * cannot be read. Without it, only the submodules `.gitmodules` lists are checked.
   */
  gitlinks?: (indexPath: string, idBytes: 20 | 32) => readonly string[] | undefined;
}

/** One tool call to decide on. */
export interface PermissionRequest extends PathContext {
  toolName: string;
  /** The parsed JSON input object. */
  input: unknown;
  mode: PermissionMode;
  /** Every rule in effect (session, agent and tenant scope), in any order. */
  rules: readonly PermissionRule[];
  /** For tools other than the built-ins: the tool's own answer to "does this input only read?". */
  toolReadOnly?: boolean;
  /** True for a tool the client executes; such a tool is checked like any custom tool. */
  external?: boolean;
}
