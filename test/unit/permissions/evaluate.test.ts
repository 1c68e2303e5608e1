import { describe, expect, it } from "vitest";
import type {
  PermissionBehavior,
  PermissionCheck,
  PermissionMode,
  PermissionRequest,
  PermissionRule,
} from "../../../src/permissions/index.js";
import { HOME, WORKDIR, allow, ask, bash, decide, deny } from "./helpers.js";

type Row = [
  label: string,
  mode: PermissionMode,
  toolName: string,
  input: unknown,
  rules: PermissionRule[],
  behavior: PermissionBehavior,
  check: PermissionCheck,
  rule?: PermissionRule,
  extra?: Partial<PermissionRequest>,
];

const MODES: PermissionMode[] = ["default", "accept_edits", "explore", "bypass", "dont_ask"];
const forEachMode = (
  label: string,
  toolName: string,
  input: unknown,
  rules: PermissionRule[],
  expected: Record<PermissionMode, [PermissionBehavior, PermissionCheck]>,
  rule?: PermissionRule,
  extra?: Partial<PermissionRequest>,
): Row[] =>
  MODES.map((mode) => {
    const [behavior, check] = expected[mode];
    const decidingRule = check.startsWith("rule.") ? rule : undefined;
    return [label, mode, toolName, input, rules, behavior, check, decidingRule, extra];
  });

const denyRm = deny("Bash", "rm:*");
const askPush = ask("Bash", "git push:*");
const allowNpm = allow("Bash", "npm install:*");
const allowRm = allow("Bash", "rm:*");
const allowWrite = allow("Write");
const allowTool = allow("deploy");

const rows: Row[] = [
  // 1. a deny rule wins in every mode, over read-only and over allow rules.
  ...forEachMode(
    "deny rule",
    "Bash",
    bash("rm x"),
    [allowRm, denyRm],
    {
      default: ["deny", "rule.deny"],
      accept_edits: ["deny", "rule.deny"],
      explore: ["deny", "rule.deny"],
      bypass: ["deny", "rule.deny"],
      dont_ask: ["deny", "rule.deny"],
    },
    denyRm,
  ),
  [
    "deny rule beats read-only",
    "default",
    "Bash",
    bash("ls -la"),
    [deny("Bash", "ls:*")],
    "deny",
    "rule.deny",
    deny("Bash", "ls:*"),
  ],
  [
    "deny rule on Read",
    "default",
    "Read",
    { file_path: `${WORKDIR}/.env` },
    [deny("Read", "**/.env")],
    "deny",
    "rule.deny",
    deny("Read", "**/.env"),
  ],
  // 2. an ask rule asks (dont_ask: deny), before read-only and allow rules.
  ...forEachMode(
    "ask rule",
    "Bash",
    bash("git push origin main"),
    [allow("Bash", "git push:*"), askPush],
    {
      default: ["ask", "rule.ask"],
      accept_edits: ["ask", "rule.ask"],
      explore: ["ask", "rule.ask"],
      bypass: ["ask", "rule.ask"],
      dont_ask: ["deny", "rule.ask"],
    },
    askPush,
  ),
  [
    "ask rule beats read-only",
    "default",
    "Read",
    { file_path: "/etc/hosts" },
    [ask("Read")],
    "ask",
    "rule.ask",
    ask("Read"),
  ],
  // 3. read-only calls are allowed in every mode.
  ...forEachMode("read-only Bash", "Bash", bash("git status && ls | grep x"), [], {
    default: ["allow", "read_only"],
    accept_edits: ["allow", "read_only"],
    explore: ["allow", "read_only"],
    bypass: ["allow", "read_only"],
    dont_ask: ["allow", "read_only"],
  }),
  ...forEachMode("Read", "Read", { file_path: "/etc/hosts" }, [], {
    default: ["allow", "read_only"],
    accept_edits: ["allow", "read_only"],
    explore: ["allow", "read_only"],
    bypass: ["allow", "read_only"],
    dont_ask: ["allow", "read_only"],
  }),
  ["Glob", "explore", "Glob", { pattern: "**/*.ts" }, [], "allow", "read_only"],
  ["Grep", "dont_ask", "Grep", { pattern: "TODO", path: "/elsewhere" }, [], "allow", "read_only"],
  // 4. a safety ASK: ASK, dont_ask DENY, bypass skips it, explore never runs the check.
  ...forEachMode("safety ask", "Bash", bash("rm -rf build"), [], {
    default: ["ask", "safety.dangerous_command"],
    accept_edits: ["ask", "safety.dangerous_command"],
    explore: ["deny", "mode.explore"],
    bypass: ["allow", "mode.bypass"],
    dont_ask: ["deny", "safety.dangerous_command"],
  }),
  // ... and no allow rule clears it.
  ...forEachMode(
    "safety ask with an allow rule",
    "Bash",
    bash("rm -rf build"),
    [allowRm, allow("Bash")],
    {
      default: ["ask", "safety.dangerous_command"],
      accept_edits: ["ask", "safety.dangerous_command"],
      explore: ["deny", "mode.explore"],
      bypass: ["allow", "mode.bypass"],
      dont_ask: ["deny", "safety.dangerous_command"],
    },
  ),
  ...forEachMode(
    "safety ask on Write",
    "Write",
    { file_path: `${HOME}/.bashrc`, content: "x" },
    [allowWrite],
    {
      default: ["ask", "safety.dangerous_path"],
      accept_edits: ["ask", "safety.dangerous_path"],
      explore: ["deny", "mode.explore"],
      bypass: ["allow", "mode.bypass"],
      dont_ask: ["deny", "safety.dangerous_path"],
    },
  ),
  [
    "safety ask inside the working directory",
    "accept_edits",
    "Edit",
    { file_path: `${WORKDIR}/.git/hooks/pre-commit` },
    [],
    "ask",
    "safety.dangerous_path",
  ],
  // 4. the tool's own ALLOW: edits inside the working directories in accept_edits and dont_ask.
  ...forEachMode("Write inside", "Write", { file_path: `${WORKDIR}/src/a.ts`, content: "x" }, [], {
    default: ["ask", "mode.default"],
    accept_edits: ["allow", "working_directory.edit"],
    explore: ["deny", "mode.explore"],
    bypass: ["allow", "mode.bypass"],
    dont_ask: ["allow", "working_directory.edit"],
  }),
  ...forEachMode("Write outside", "Write", { file_path: "/tmp/a.ts", content: "x" }, [], {
    default: ["ask", "mode.default"],
    accept_edits: ["ask", "mode.accept_edits"],
    explore: ["deny", "mode.explore"],
    bypass: ["allow", "mode.bypass"],
    dont_ask: ["deny", "mode.dont_ask"],
  }),
  ...forEachMode(
    "Bash edits inside",
    "Bash",
    bash("mkdir -p build/out && cp a.txt build/out/"),
    [],
    {
      default: ["ask", "mode.default"],
      accept_edits: ["allow", "working_directory.edit"],
      explore: ["deny", "mode.explore"],
      bypass: ["allow", "mode.bypass"],
      dont_ask: ["allow", "working_directory.edit"],
    },
  ),
  // 4. the tool's own DENY: input the engine cannot read.
  ["invalid Bash input", "default", "Bash", { cmd: "ls" }, [], "deny", "tool.invalid_input"],
  ["invalid Write input", "bypass", "Write", { content: "x" }, [], "deny", "tool.invalid_input"],
  ["invalid input in explore", "explore", "Bash", {}, [], "deny", "mode.explore"],
  // 5. allow rules (explore skips them).
  ...forEachMode(
    "allow rule",
    "Bash",
    bash("npm install zod"),
    [allowNpm],
    {
      default: ["allow", "rule.allow"],
      accept_edits: ["allow", "rule.allow"],
      explore: ["deny", "mode.explore"],
      bypass: ["allow", "rule.allow"],
      dont_ask: ["allow", "rule.allow"],
    },
    allowNpm,
  ),
  [
    "allow rule on Write",
    "default",
    "Write",
    { file_path: "/tmp/x" },
    [allowWrite],
    "allow",
    "rule.allow",
    allowWrite,
  ],
  // 6. the fallback per mode.
  ...forEachMode("fallback", "Bash", bash("npm install zod"), [], {
    default: ["ask", "mode.default"],
    accept_edits: ["ask", "mode.accept_edits"],
    explore: ["deny", "mode.explore"],
    bypass: ["allow", "mode.bypass"],
    dont_ask: ["deny", "mode.dont_ask"],
  }),
  // AskUser never asks, in any mode and whatever ask rule; a deny rule still applies.
  ...forEachMode(
    "AskUser",
    "AskUser",
    { questions: [] },
    [ask("AskUser")],
    {
      default: ["allow", "tool.ask_user"],
      accept_edits: ["allow", "tool.ask_user"],
      explore: ["allow", "tool.ask_user"],
      bypass: ["allow", "tool.ask_user"],
      dont_ask: ["allow", "tool.ask_user"],
    },
    undefined,
    { external: true },
  ),
  [
    "AskUser with a deny rule",
    "default",
    "AskUser",
    {},
    [deny("AskUser")],
    "deny",
    "rule.deny",
    deny("AskUser"),
  ],
  // Custom and external tools ask by default; only tool-name rules apply.
  ...forEachMode("custom tool", "deploy", { env: "prod" }, [], {
    default: ["ask", "custom_tool"],
    accept_edits: ["ask", "custom_tool"],
    explore: ["deny", "mode.explore"],
    bypass: ["allow", "mode.bypass"],
    dont_ask: ["deny", "mode.dont_ask"],
  }),
  [
    "custom tool, tool-name allow rule",
    "default",
    "deploy",
    {},
    [allowTool],
    "allow",
    "rule.allow",
    allowTool,
  ],
  [
    "custom tool, content rule never matches",
    "default",
    "deploy",
    {},
    [allow("deploy", "prod")],
    "ask",
    "custom_tool",
  ],
  [
    "custom tool, other tool's rule",
    "default",
    "deploy",
    {},
    [allow("build")],
    "ask",
    "custom_tool",
  ],
  [
    "custom tool, read-only",
    "explore",
    "lookup",
    {},
    [],
    "allow",
    "read_only",
    undefined,
    { toolReadOnly: true },
  ],
  [
    "custom tool, not read-only",
    "default",
    "lookup",
    {},
    [],
    "ask",
    "custom_tool",
    undefined,
    { toolReadOnly: false },
  ],
  ["external tool", "default", "sign", {}, [], "ask", "custom_tool", undefined, { external: true }],
  [
    "external tool named like a built-in",
    "default",
    "Read",
    { file_path: "/x" },
    [],
    "ask",
    "custom_tool",
    undefined,
    { external: true },
  ],
];

describe("evaluate: every mode × decision path", () => {
  it.each(rows)(
    "%s in %s",
    (_label, mode, toolName, input, rules, behavior, check, rule, extra) => {
      const decision = decide(toolName, input, mode, rules, extra);
      expect(decision.behavior).toBe(behavior);
      expect(decision.check).toBe(check);
      expect(decision.rule).toEqual(rule);
      if (check.startsWith("rule.")) expect(rule).toBeDefined();
      expect(decision.bypassImmune).toBe(check.startsWith("safety."));
      expect(decision.reason).not.toBe("");
      if (behavior !== "ask" || decision.bypassImmune) expect(decision.suggestedRules).toEqual([]);
    },
  );
});

describe("evaluate: decision details", () => {
  it("suggests rules on an ask rule's ASK", () => {
    const decision = decide("Bash", bash("git push origin main"), "default", [askPush]);
    expect(decision.suggestedRules).toEqual([
      { toolName: "Bash", ruleContent: "git push:*", behavior: "allow", source: "suggested" },
    ]);
  });

  it("suggests rules on a fallback ASK and names the tool for custom tools", () => {
    expect(decide("deploy", {}).suggestedRules).toEqual([
      { toolName: "deploy", behavior: "allow", source: "suggested" },
    ]);
    expect(
      decide("Bash", bash("npm install zod")).suggestedRules.map((r) => r.ruleContent),
    ).toEqual(["npm install:*"]);
  });

  it("suggests nothing on a safety ASK (no allow rule could clear it)", () => {
    const decision = decide("Bash", bash("npm test && rm -rf dist"));
    expect(decision).toMatchObject({ behavior: "ask", check: "safety.dangerous_command" });
    expect(decision.suggestedRules).toEqual([]);
  });

  it("names the skipped safety check when bypass allows", () => {
    expect(decide("Bash", bash("rm -rf build"), "bypass").reason).toContain("rm -rf");
  });

  it("lets an allow rule decide once the tool's own check merely asks", () => {
    const rule = allow("Bash", "npm test:*");
    expect(decide("Bash", bash("cd app && npm test"), "default", [rule])).toMatchObject({
      behavior: "allow",
      check: "rule.allow",
      rule,
    });
  });

  it("does not let an allow rule cover a compound command it only partly matches", () => {
    const rule = allow("Bash", "npm test:*");
    expect(decide("Bash", bash("npm test && npm publish"), "default", [rule])).toMatchObject({
      behavior: "ask",
      check: "mode.default",
    });
  });

  it("lets allow rules share a compound command", () => {
    const rules = [allow("Bash", "npm test:*"), allow("Bash", "git commit:*")];
    const decision = decide("Bash", bash("npm test && git commit -m ok"), "default", rules);
    expect(decision).toMatchObject({ behavior: "allow", check: "rule.allow", rule: rules[0] });
  });

  it("checks deny rules before AskUser's allowance and ask rules before read-only", () => {
    expect(decide("AskUser", {}, "default", [deny("AskUser")]).behavior).toBe("deny");
    expect(decide("Bash", bash("ls"), "default", [ask("Bash", "ls")]).check).toBe("rule.ask");
  });

  it("treats an empty working-directory list as nothing inside", () => {
    const decision = decide("Write", { file_path: "/a/b" }, "accept_edits", [], {
      workingDirectories: [],
    });
    expect(decision).toMatchObject({ behavior: "ask", check: "mode.accept_edits" });
  });
});
