import { checkBashSafety } from "./check-bash-safety.js";
import { dangerousPathReason } from "./dangerous-path.js";
import { type CallView, describeCall } from "./describe-call.js";
import { editsInsideWorkingDirectories } from "./edits-inside-working-directories.js";
import { findAllowingRule, ruleMatchesCall } from "./match-rule.js";
import { isInsideWorkingDirectory } from "./resolve-path.js";
import { formatRule } from "./rule-syntax.js";
import { suggestRules } from "./suggest-rules.js";
import { withProbeBudget } from "./probe-budget.js";
import type {
  Decision,
  PathContext,
  PermissionBehavior,
  PermissionCheck,
  PermissionRequest,
  PermissionRule,
  SafetyCheck,
} from "./types.js";

/** Safety checks that even bypass mode does not skip: a sed script that runs or writes. */
const BYPASS_NEVER_SKIPS: ReadonlySet<PermissionCheck> = new Set(["safety.sed_script"]);

/** What a tool's own check (step 4) says about a call. */
type ToolCheck =
  | { kind: "allow" | "deny"; check: PermissionCheck; reason: string }
  | { kind: "safety"; check: SafetyCheck; reason: string }
  | { kind: "ask"; reason: string };

/**
 * Decides on one tool call. Pure: everything comes from `request`. The order is the reference's
 * (agentscope-hitl §3), in every mode; the first step that decides wins:
 *
 * 1. a matching deny rule → DENY. (AskUser is then always ALLOWed: asking permission to ask the
 *    user is meaningless, so ask rules and modes do not apply to it; a deny rule still disables it.)
 * 2. a matching ask rule → ASK with suggestions; in dont_ask, DENY.
 * 3. the call only reads → ALLOW (Bash per command line; Read, Glob, Grep always; other tools by
 *    `toolReadOnly`).
 * 4. (not in explore) the tool's own check. ALLOW and DENY stand (edits inside the working
 *    directories in accept_edits and dont_ask; invalid input). A safety ASK (injection, dangerous
 *    command, dangerous path, removal of a root, a sed script that runs a program or writes) stays
 *    ASK and is bypass-immune: no allow rule clears it, and no rules are suggested for it. In
 *    dont_ask it is a DENY; bypass mode, which a person chose for the session, skips it (ALLOW,
 *    check "mode.bypass", the reason names the skipped check), except the sed check, which no
 *    mode clears. Any other ASK falls through.
 * 5. (not in explore) allow rules that cover the call → ALLOW.
 * 6. the mode: default and accept_edits ASK (check "custom_tool" for custom and external tools),
 *    bypass ALLOWs, dont_ask and explore DENY.
 */
export function evaluate(request: PermissionRequest): Decision {
  const { toolName, mode, rules } = request;
  const context: PathContext = withProbeBudget({
    workingDirectories: request.workingDirectories,
    homeDir: request.homeDir,
    ...(request.realPath === undefined ? {} : { realPath: request.realPath }),
    ...(request.listDirectory === undefined ? {} : { listDirectory: request.listDirectory }),
    ...(request.readSmallFile === undefined ? {} : { readSmallFile: request.readSmallFile }),
    ...(request.hardLinked === undefined ? {} : { hardLinked: request.hardLinked }),
    ...(request.gitlinks === undefined ? {} : { gitlinks: request.gitlinks }),
  });
  const view = describeCall(toolName, request.input, context, request.external === true);
  const decide = (
    behavior: PermissionBehavior,
    check: PermissionCheck,
    reason: string,
    rule?: PermissionRule,
  ): Decision => {
    const bypassImmune = check.startsWith("safety.");
    const suggestedRules =
      behavior === "ask" && !bypassImmune ? suggestRules(toolName, view, context, rules) : [];
    const decision: Decision = { behavior, reason, check, bypassImmune, suggestedRules };
    return rule === undefined ? decision : { ...decision, rule };
  };
  const matching = (behavior: PermissionBehavior): PermissionRule | undefined =>
    rules.find(
      (rule) => rule.behavior === behavior && ruleMatchesCall(rule, toolName, view, context),
    );

  const deny = matching("deny");
  if (deny !== undefined)
    return decide("deny", "rule.deny", `denied by rule ${formatRule(deny)}`, deny);

  if (view.kind === "ask_user") {
    return decide(
      "allow",
      "tool.ask_user",
      "AskUser asks the user a question; it never needs permission",
    );
  }

  const ask = matching("ask");
  if (ask !== undefined) {
    return mode === "dont_ask"
      ? decide(
          "deny",
          "rule.ask",
          `rule ${formatRule(ask)} asks, and dont_ask mode denies instead`,
          ask,
        )
      : decide("ask", "rule.ask", `rule ${formatRule(ask)} asks for confirmation`, ask);
  }

  const readOnly = readOnlyReason(view, request);
  if (readOnly !== undefined) return decide("allow", "read_only", readOnly);

  let ownReason = describeWork(view, toolName, request.external === true);
  if (mode !== "explore") {
    const own = toolCheck(view, request, context);
    switch (own.kind) {
      case "allow":
      case "deny":
        return decide(own.kind, own.check, own.reason);
      case "safety":
        if (mode === "bypass" && !BYPASS_NEVER_SKIPS.has(own.check)) {
          return decide(
            "allow",
            "mode.bypass",
            `bypass mode skips the safety check: ${own.reason}`,
          );
        }
        return mode === "dont_ask"
          ? decide("deny", own.check, `${own.reason}; dont_ask mode denies instead of asking`)
          : decide("ask", own.check, own.reason);
      case "ask":
        ownReason = own.reason;
    }
    const allow = findAllowingRule(rules, toolName, view, context);
    if (allow !== undefined) {
      return decide("allow", "rule.allow", `allowed by rule ${formatRule(allow)}`, allow);
    }
  }

  switch (mode) {
    case "default":
    case "accept_edits":
      return decide(
        "ask",
        view.kind === "custom" ? "custom_tool" : `mode.${mode}`,
        `${ownReason}; ${mode} mode asks`,
      );
    case "bypass":
      return decide("allow", "mode.bypass", `${ownReason}; bypass mode allows it`);
    case "dont_ask":
      return decide("deny", "mode.dont_ask", `${ownReason}; dont_ask mode denies what would ask`);
    case "explore":
      return decide(
        "deny",
        "mode.explore",
        `${ownReason}; explore mode allows only read-only calls`,
      );
  }
}

/** Step 3: why the call only reads, or undefined when it may do more. */
function readOnlyReason(view: CallView, request: PermissionRequest): string | undefined {
  switch (view.kind) {
    case "bash":
      return view.analysis.readOnly ? "read-only command" : undefined;
    case "file":
      return request.toolName === "Read" ? "Read only reads files" : undefined;
    case "search":
      return `${request.toolName} only reads files`;
    case "custom":
      return request.toolReadOnly === true
        ? `${request.toolName} says this call only reads`
        : undefined;
    default:
      return undefined;
  }
}

/** Step 4 for a call that is not read-only. */
function toolCheck(view: CallView, request: PermissionRequest, context: PathContext): ToolCheck {
  const editsAllowed = request.mode === "accept_edits" || request.mode === "dont_ask";
  switch (view.kind) {
    case "invalid":
      return { kind: "deny", check: "tool.invalid_input", reason: view.reason };
    case "bash": {
      const written = view.analysis.commands.flatMap((command) =>
        command.writes.map((located) => located.real),
      );
      const finding = checkBashSafety(view.script, context, written);
      if (finding !== undefined) return { kind: "safety", ...finding };
      if (editsAllowed && editsInsideWorkingDirectories(view, context)) {
        return {
          kind: "allow",
          check: "working_directory.edit",
          reason: `edits only inside the working directories (${request.mode} mode)`,
        };
      }
      return { kind: "ask", reason: describeWork(view, request.toolName, false) };
    }
    case "file": {
      const danger =
        dangerousPathReason(view.path, context) ??
        dangerousPathReason(view.located.path, context) ??
        dangerousPathReason(view.rawPath, context);
      if (danger !== undefined) {
        return { kind: "safety", check: "safety.dangerous_path", reason: `writes to a ${danger}` };
      }
      const inside = isInsideWorkingDirectory(view.path, context);
      if (editsAllowed && inside) {
        return {
          kind: "allow",
          check: "working_directory.edit",
          reason: `writes ${view.path} inside the working directories (${request.mode} mode)`,
        };
      }
      const where = inside ? "" : " outside the working directories";
      return { kind: "ask", reason: `${request.toolName} writes ${view.path}${where}` };
    }
    default:
      return {
        kind: "ask",
        reason: describeWork(view, request.toolName, request.external === true),
      };
  }
}

/** A short description of what the call does, for reasons. */
function describeWork(view: CallView, toolName: string, external: boolean): string {
  switch (view.kind) {
    case "bash": {
      const oneLine = view.command.replace(/\s+/g, " ").trim();
      const command = oneLine.length > 80 ? `${oneLine.slice(0, 77)}...` : oneLine;
      const why = view.analysis.detail;
      return `command may change things${why === undefined ? "" : ` (${why})`}: ${command}`;
    }
    case "file":
      return `${toolName} writes ${view.path}`;
    case "invalid":
      return view.reason;
    default:
      return `${external ? "external tool" : "tool"} ${toolName} needs permission`;
  }
}
