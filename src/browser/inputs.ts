import { create, type JsonObject } from "@bufbuild/protobuf";
import type { SendInput } from "./create-web-client.js";
import { AskUserAnswerSchema } from "../generated-es/parkway/v1/ask_user_pb.js";
import {
  ToolCallBlockSchema,
  ToolResultBlockSchema,
  ToolResultState,
  type ToolCallBlock,
} from "../generated-es/parkway/v1/content_pb.js";
import {
  ConfirmResultSchema,
  ExternalExecutionResultSchema,
  UserConfirmResultSchema,
  type ConfirmResult,
} from "../generated-es/parkway/v1/events_pb.js";
import {
  PermissionBehavior,
  PermissionRuleSchema,
  RuleScope,
  type PermissionRule,
} from "../generated-es/parkway/v1/permission_pb.js";

/** How to allow a pending call. */
export interface AllowOptions {
  /** Rules to accept with it (usually some of its suggested_rules); default none. */
  rules?: PermissionRule[];
  /** The scope of the accepted rules; default SESSION. */
  scope?: RuleScope;
  /** The input to run instead, as JSON text; the server validates it and checks it again. */
  editedInput?: string;
}

/** A result for an external call. */
export interface ExternalResult {
  /** Text the model reads. */
  output?: string;
  /** Default SUCCESS. */
  state?: ToolResultState;
  /** Structured data, checked against the tool's metadata schema when it has one. */
  metadata?: JsonObject;
}

/** One AskUser answer: chosen labels and, or instead, free text. */
export interface AskUserAnswerInput {
  question: string;
  selected: string[];
  other?: string;
}

/** The call as a confirmation names it: id and name, with the edited input or none. */
function callRef(call: ToolCallBlock, input = ""): ToolCallBlock {
  return create(ToolCallBlockSchema, { id: call.id, name: call.name, input });
}

/** A ConfirmResult that allows `call`. */
export function allow(call: ToolCallBlock, options: AllowOptions = {}): ConfirmResult {
  const scope = options.scope ?? RuleScope.SESSION;
  return create(ConfirmResultSchema, {
    confirmed: true,
    toolCall: callRef(call, options.editedInput ?? ""),
    rules: (options.rules ?? []).map((rule) =>
      create(PermissionRuleSchema, {
        toolName: rule.toolName,
        ...(rule.ruleContent === undefined ? {} : { ruleContent: rule.ruleContent }),
        behavior: rule.behavior || PermissionBehavior.ALLOW,
        scope,
      }),
    ),
  });
}

/** A ConfirmResult that denies `call`; the model sees `reason`. */
export function deny(call: ToolCallBlock, reason = ""): ConfirmResult {
  return create(ConfirmResultSchema, { confirmed: false, toolCall: callRef(call), reason });
}

/** Send's input answering confirmations of the parked reply `replyId`. */
export function confirmInput(replyId: string, results: ConfirmResult[]): SendInput {
  return {
    case: "userConfirmResult",
    value: create(UserConfirmResultSchema, { replyId, confirmResults: results }),
  };
}

/** Send's input carrying the result of an external call of the parked reply `replyId`. */
export function externalResultInput(
  replyId: string,
  call: ToolCallBlock,
  result: ExternalResult,
): SendInput {
  const block = create(ToolResultBlockSchema, {
    id: call.id,
    name: call.name,
    output: result.output
      ? [{ block: { case: "text", value: { id: "", text: result.output } } }]
      : [],
    state: result.state ?? ToolResultState.SUCCESS,
    ...(result.metadata ? { metadata: result.metadata } : {}),
  });
  return {
    case: "externalExecutionResult",
    value: create(ExternalExecutionResultSchema, { replyId, executionResults: [block] }),
  };
}

/** Send's input answering the AskUser call `call` of the parked reply `replyId`. */
export function askUserInput(
  replyId: string,
  call: ToolCallBlock,
  answers: AskUserAnswerInput[],
): SendInput {
  const block = create(ToolResultBlockSchema, {
    id: call.id,
    name: call.name,
    state: ToolResultState.SUCCESS,
    askUser: {
      answers: answers.map((a) =>
        create(AskUserAnswerSchema, {
          question: a.question,
          selected: a.selected,
          ...(a.other ? { other: a.other } : {}),
        }),
      ),
    },
  });
  return {
    case: "externalExecutionResult",
    value: create(ExternalExecutionResultSchema, { replyId, executionResults: [block] }),
  };
}
