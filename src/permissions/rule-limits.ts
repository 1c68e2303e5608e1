import { globTooComplex } from "./glob-limits.js";
import type { PermissionRule } from "./types.js";

/**
 * The most bytes of a rule's content (UTF-8): what a suggested rule may have, so every rule a person
 * accepts fits, and a pattern or path longer than that would match almost nothing else.
 */
export const MAX_RULE_CONTENT_BYTES = 1024;

/** The most characters of a rule's tool name: what model endpoints accept for a tool's name. */
export const MAX_RULE_TOOL_NAME_CHARS = 64;

/**
 * The most rules stored in one scope (one session's, one agent's, one tenant's), and configured for
 * one agent. A session's rules in effect come from four such sets (configured, tenant, agent and
 * session scope), so ListRules of a session carries at most 4 × 500 rules. A rule on the wire is at
 * most 1,398 bytes: content 1,024, tool name 64, agent id 64, token name 128 (created_by), three ids
 * Parkway makes (rule, session, tool call: about 30 each), a timestamp and three enums, with their
 * tags and lengths. So the largest ListRules response is 2.8 MB, two thirds of the 4 MiB every
 * gRPC client accepts by default (test/unit/permissions/rule-limits.test.ts measures it).
 */
export const MAX_RULES_PER_SCOPE = 500;

/** A tool's name, `Bash`, `my-tool` or `mcp__server__tool`, or `mcp__server` for a server's tools. */
const RULE_TOOL_NAME = new RegExp(`^[A-Za-z0-9_-]{1,${MAX_RULE_TOOL_NAME_CHARS}}$`);

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/** The tools whose rules' content is a glob (see match-rule.ts). */
const GLOB_RULE_TOOLS = new Set(["Read", "Write", "Edit", "Glob", "Grep"]);

/** What is wrong with a rule's tool name or content, by field (`tool_name`, `rule_content`). */
export interface RuleProblem {
  field: "tool_name" | "rule_content";
  description: string;
}

/**
 * Why a rule cannot be stored or configured: a tool name that is not one, or content that is
 * empty (present but blank: a rule for the whole tool leaves it unset), too long, a glob too
 * complex to match quickly (see glob-limits.ts), or holding a control character. Empty when the
 * rule is fine.
 */
export function ruleProblems(
  rule: Pick<PermissionRule, "toolName" | "ruleContent">,
): RuleProblem[] {
  const problems: RuleProblem[] = [];
  const { toolName, ruleContent } = rule;
  if (!toolName) {
    problems.push({ field: "tool_name", description: "is required" });
  } else if (!RULE_TOOL_NAME.test(toolName)) {
    problems.push({
      field: "tool_name",
      description: `${JSON.stringify(toolName.slice(0, 80))}${toolName.length > 80 ? "…" : ""} is not a tool name: 1 to ${MAX_RULE_TOOL_NAME_CHARS} letters, digits, _ and - (Bash, mcp__server__tool, mcp__server)`,
    });
  }
  if (ruleContent !== undefined) {
    const bytes = Buffer.byteLength(ruleContent);
    if (ruleContent.trim() === "") {
      problems.push({
        field: "rule_content",
        description: "is empty; leave it unset for the whole tool",
      });
    } else if (bytes > MAX_RULE_CONTENT_BYTES) {
      problems.push({
        field: "rule_content",
        description: `is ${bytes} bytes; a rule's content is at most ${MAX_RULE_CONTENT_BYTES} bytes`,
      });
    } else if (GLOB_RULE_TOOLS.has(toolName ?? "") && globTooComplex(ruleContent) !== undefined) {
      problems.push({
        field: "rule_content",
        description: `${globTooComplex(ruleContent) ?? ""} (a glob past that could take the server seconds to match)`,
      });
    } else if (CONTROL_CHARACTER.test(ruleContent)) {
      const code = ruleContent.match(CONTROL_CHARACTER)![0].charCodeAt(0);
      problems.push({
        field: "rule_content",
        description: `holds a control character (U+${code.toString(16).toUpperCase().padStart(4, "0")}); a rule's content is one line of printable text`,
      });
    }
  }
  return problems;
}
