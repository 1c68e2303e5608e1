import type { ToolCallBlock, ToolResultBlock } from "../generated/parkway/v1/content.js";
import { ToolResultState } from "../generated/parkway/v1/content.js";
import type { ConfirmResult } from "../generated/parkway/v1/events.js";
import {
  type PermissionRule,
  PermissionBehavior,
  RuleScope,
} from "../generated/parkway/v1/permission.js";

/** Where an accepted rule applies. */
export type Scope = "session" | "agent" | "tenant";

/** How to confirm a call. */
export interface ConfirmOptions {
  /** Rules to accept: "suggested" takes the call's suggestions; default none. */
  rules?: "suggested" | PermissionRule[];
  /** The scope of the accepted rules; default "session". */
  scope?: Scope;
  /** The input to run instead (an object, or its JSON text); checked by the server. */
  editedInput?: unknown;
}

/** A result for an external call. */
export interface ExternalResult {
  output?: string;
  /**
   * Data after the text: an image (PNG, JPEG, GIF, WebP; bytes or an http(s) URL) or a text document
   * (text/*, JSON, XML, YAML; bytes). The model sees images and reads documents as text; any other
   * media type is refused with INVALID_ARGUMENT.
   */
  data?: ({ mediaType: string } & ({ bytes: Uint8Array } | { url: string }))[];
  state?: "success" | "error" | "denied" | "interrupted";
  metadata?: Record<string, unknown>;
}

/** An AskUser answer: a label, several labels, or free text. */
export type Answer = string | string[] | { other: string; selected?: string[] };

const SCOPES: Record<Scope, RuleScope> = {
  session: RuleScope.RULE_SCOPE_SESSION,
  agent: RuleScope.RULE_SCOPE_AGENT,
  tenant: RuleScope.RULE_SCOPE_TENANT,
};

const STATES = {
  success: ToolResultState.TOOL_RESULT_STATE_SUCCESS,
  error: ToolResultState.TOOL_RESULT_STATE_ERROR,
  denied: ToolResultState.TOOL_RESULT_STATE_DENIED,
  interrupted: ToolResultState.TOOL_RESULT_STATE_INTERRUPTED,
} as const;

function callRef(call: ToolCallBlock, input = ""): ToolCallBlock {
  return { ...call, input, suggestedRules: [], askUser: undefined, decision: undefined };
}

/** A ConfirmResult that allows `call`. */
export function confirmation(call: ToolCallBlock, options: ConfirmOptions = {}): ConfirmResult {
  const scope = SCOPES[options.scope ?? "session"];
  const rules = options.rules === "suggested" ? call.suggestedRules : (options.rules ?? []);
  const edited =
    options.editedInput === undefined
      ? ""
      : typeof options.editedInput === "string"
        ? options.editedInput
        : JSON.stringify(options.editedInput);
  return {
    confirmed: true,
    toolCall: callRef(call, edited),
    rules: rules.map((r) => ({
      ...r,
      behavior: r.behavior || PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW,
      scope,
    })),
    reason: "",
  };
}

/** A ConfirmResult that denies `call`; the model sees the reason. */
export function denial(call: ToolCallBlock, reason = ""): ConfirmResult {
  return { confirmed: false, toolCall: callRef(call), rules: [], reason };
}

/** The result of an external call. */
export function executionResult(call: ToolCallBlock, result: ExternalResult): ToolResultBlock {
  return {
    id: call.id,
    name: call.name,
    output: [
      ...(result.output
        ? [{ block: { $case: "text" as const, value: { id: "", text: result.output } } }]
        : []),
      ...(result.data ?? []).map((part) => ({
        block: {
          $case: "data" as const,
          value: {
            id: "",
            mediaType: part.mediaType,
            source:
              "url" in part
                ? { $case: "url" as const, value: part.url }
                : { $case: "data" as const, value: Buffer.from(part.bytes) },
          },
        },
      })),
    ],
    state: STATES[result.state ?? "success"],
    metadata: result.metadata,
    askUser: undefined,
  };
}

/**
 * The result of an AskUser call from answers keyed by question text: a label, a list of labels,
 * or `{ other }` free text.
 */
export function askUserResult(
  call: ToolCallBlock,
  answers: Record<string, Answer>,
): ToolResultBlock {
  return {
    ...executionResult(call, {}),
    askUser: {
      answers: Object.entries(answers).map(([question, answer]) => {
        if (typeof answer === "string") return { question, selected: [answer] };
        if (Array.isArray(answer)) return { question, selected: answer };
        return { question, selected: answer.selected ?? [], other: answer.other };
      }),
    },
  };
}
