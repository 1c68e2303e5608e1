import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import type { SessionInput } from "../../src/client/index.js";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import {
  PermissionBehavior,
  RuleScope,
  type PermissionRule,
} from "../../src/generated/parkway/v1/permission.js";
import { kind } from "./parkway-harness.js";
import { REPO_ROOT } from "./spawn-server.js";

/** A scenario file of test/scenarios (see its README). */
export interface Scenario {
  name: string;
  agent?: Record<string, unknown>;
  files?: Record<string, string>;
  script: { turns: unknown[] };
  steps: Step[];
  final?: {
    status?: string;
    model_saw?: string[];
    files?: Record<string, string>;
    rules?: number;
  };
}

export interface Step {
  send?: string;
  confirm?: {
    call: string;
    confirmed: boolean;
    rules?: "suggested" | { tool_name: string; rule_content?: string; scope?: string }[];
    reason?: string;
    input?: unknown;
  }[];
  results?: {
    call: string;
    output?: string;
    state?: string;
    metadata?: Record<string, unknown>;
    answers?: { question: string; selected: string[]; other?: string }[];
  }[];
  interrupt?: boolean;
  wait?: boolean;
  new_session?: boolean;
  reconnect?: boolean;
  restart?: boolean;
  crash?: boolean;
  expect?: string[];
  error?: { code: string; field?: string; message?: string };
}

export const SCENARIO_DIR = fileURLToPath(new URL("../scenarios", import.meta.url));

/** Every scenario, with its file name; `$WORKDIR` and `$REPO` are replaced when it is run. */
export function loadScenarios(): { file: string; text: string }[] {
  return readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file) => ({ file, text: readFileSync(path.join(SCENARIO_DIR, file), "utf8") }));
}

/** Parses a scenario with `$WORKDIR` and `$REPO` replaced (JSON-escaped). */
export function instantiate(text: string, workdir: string): Scenario {
  const escaped = (value: string) => JSON.stringify(value).slice(1, -1);
  return JSON.parse(
    text
      .replaceAll("$WORKDIR", escaped(workdir))
      .replaceAll("$REPO", escaped(path.resolve(REPO_ROOT))),
  ) as Scenario;
}

/**
 * The scenario's names for tool calls, bound to the ids the server assigned (see the README): an
 * expectation `tool_call_start X` binds X to its event's call id (again: rebinds it); everywhere
 * else X stands for the id it is bound to. A name never bound stands for itself.
 */
export class CallAliases {
  private readonly ids = new Map<string, string>();

  bind(alias: string, id: string): void {
    this.ids.set(alias, id);
  }

  /** The id `alias` stands for. */
  id(alias: string): string {
    return this.ids.get(alias) ?? alias;
  }

  /** The alias bound to `id` now, else `id` itself. */
  alias(id: string): string {
    for (const [alias, bound] of this.ids) if (bound === id) return alias;
    return id;
  }

  /** An error message pattern with every word that is a bound alias replaced by its id (escaped). */
  pattern(source: string): string {
    return source.replace(/\w+/g, (word) => {
      const id = this.ids.get(word);
      return id === undefined ? word : id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    });
  }
}

/**
 * "tool_result_end call_1 DENIED" for an event, trimmed to the detail the expectation names; call ids
 * are written as the aliases bound to them.
 */
function describeEvent(event: ServerEvent, detail: number, aliases: CallAliases): string {
  const k = kind(event);
  const value = event.event?.value as
    { toolCallId?: string; state?: number; toolCalls?: { id: string }[] } | undefined;
  const ids =
    value?.toolCallId !== undefined ? [value.toolCallId] : value?.toolCalls?.map((c) => c.id);
  const call = ids?.map((id) => aliases.alias(id)).join(",");
  const parts = [k];
  if (detail >= 2 && call) parts.push(call);
  if (detail >= 3 && value?.state !== undefined) {
    parts.push(ToolResultState[value.state]!.replace("TOOL_RESULT_STATE_", ""));
  }
  return parts.join(" ");
}

/**
 * Describes events as the expectation at the same place does, collapsing consecutive identical delta
 * entries; a TOOL_CALL_START facing `tool_call_start X` first binds X to its call id.
 */
export function shapeAgainst(
  events: ServerEvent[],
  expected: string[],
  aliases: CallAliases,
): string[] {
  const out: string[] = [];
  for (const event of events) {
    const want = (expected[Math.min(out.length, expected.length - 1)] ?? "").split(" ");
    if (event.event?.$case === "toolCallStart" && want[0] === "tool_call_start" && want[1]) {
      aliases.bind(want[1], event.event.value.toolCallId);
    }
    const d = describeEvent(event, Math.max(1, want.length), aliases);
    if (kind(event).endsWith("_delta") && out[out.length - 1] === d) continue;
    out.push(d);
  }
  return out;
}

/**
 * The input a `send`, `confirm` or `results` step sends, with call aliases resolved; `suggested` gives
 * the rules the server suggested for a call (for `rules: "suggested"`). Undefined for other steps.
 */
export function stepInput(
  step: Step,
  aliases: CallAliases,
  suggested: (callId: string) => PermissionRule[],
): SessionInput | undefined {
  if (step.send !== undefined) {
    return { $case: "userMessage", value: { text: step.send, content: [] } };
  }
  if (step.confirm) {
    return {
      $case: "userConfirmResult",
      value: {
        replyId: "",
        confirmResults: step.confirm.map((c) => ({
          confirmed: c.confirmed,
          toolCall: {
            id: aliases.id(c.call),
            name: "",
            input: c.input === undefined ? "" : JSON.stringify(c.input),
            state: 0,
            suggestedRules: [],
            askUser: undefined,
            decision: undefined,
            expiresAt: undefined,
          },
          rules:
            c.rules === "suggested"
              ? suggested(aliases.id(c.call))
              : (c.rules ?? []).map((r) => ({
                  id: "",
                  toolName: r.tool_name,
                  ruleContent: r.rule_content,
                  behavior: PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW,
                  scope:
                    RuleScope[
                      `RULE_SCOPE_${(r.scope ?? "session").toUpperCase()}` as keyof typeof RuleScope
                    ],
                  source: 0,
                  createdBy: "",
                  createdAt: undefined,
                  sessionId: "",
                  agentId: "",
                  toolCallId: "",
                })),
          reason: c.reason ?? "",
        })),
      },
    };
  }
  if (step.results) {
    return {
      $case: "externalExecutionResult",
      value: {
        replyId: "",
        executionResults: step.results.map((r) => ({
          id: aliases.id(r.call),
          name: "",
          output: r.output ? [{ block: { $case: "text", value: { id: "", text: r.output } } }] : [],
          state:
            ToolResultState[
              `TOOL_RESULT_STATE_${(r.state ?? "success").toUpperCase()}` as keyof typeof ToolResultState
            ],
          metadata: r.metadata,
          askUser: r.answers ? { answers: r.answers } : undefined,
        })),
      },
    };
  }
  return undefined;
}
