import type {
  Block,
  DataPart,
  DecisionInfo,
  Msg,
  PolicyOutcome,
  Rule,
  ToolCallBlock,
} from "../../agent/types.js";
import {
  type ContentBlock,
  type Msg as PbMsg,
  Role,
  type ToolCallBlock as PbToolCallBlock,
  type ToolOutputBlock,
} from "../../generated/parkway/v1/content.js";
import type { AskUserInput, AskUserMetadata } from "../../generated/parkway/v1/ask_user.js";
import { answersIn } from "../../tools/answer-entry.js";
import type {
  PermissionDecision as PbDecision,
  PermissionRule as PbRule,
  PolicyAnswer as PbPolicyAnswer,
} from "../../generated/parkway/v1/permission.js";
import {
  behavior,
  finishedReason,
  policyResult,
  ruleScope,
  ruleSource,
  toolCallState,
  toolResultState,
} from "./enums.js";

export function ruleToPb(rule: Rule): PbRule {
  return {
    id: rule.id ?? "",
    toolName: rule.toolName,
    ruleContent: rule.ruleContent,
    behavior: behavior.toPb(rule.behavior),
    scope: ruleScope.toPb(rule.scope),
    source: ruleSource.toPb(rule.source),
    createdBy: rule.createdBy ?? "",
    createdAt: rule.createdAt ? new Date(rule.createdAt) : undefined,
    sessionId: rule.sessionId ?? "",
    agentId: rule.agentId ?? "",
    toolCallId: rule.toolCallId ?? "",
  };
}

/** The policy service's part in a decision. */
export function policyToPb(policy: PolicyOutcome): PbPolicyAnswer {
  return {
    result: policyResult.toPb(policy.result),
    reason: policy.reason ?? "",
    latencyMs: policy.latencyMs,
    engineBehavior: behavior.toPb(policy.engineBehavior),
    engineCheck: policy.engineCheck,
    ignored: policy.ignored ?? false,
  };
}

export function decisionToPb(decision: DecisionInfo): PbDecision {
  return {
    behavior: behavior.toPb(decision.behavior),
    reason: decision.reason,
    rule: decision.rule ? ruleToPb(decision.rule) : undefined,
    check: decision.check,
    bypassImmune: decision.bypassImmune,
    suggestedRules: decision.suggestedRules.map(ruleToPb),
    policy: decision.policy ? policyToPb(decision.policy) : undefined,
  };
}

/** The typed AskUser input of a call, when its JSON input has that shape. */
function askUserInput(input: string): AskUserInput | undefined {
  try {
    const parsed = JSON.parse(input) as {
      questions?: {
        question?: string;
        header?: string;
        context?: string;
        options?: { label?: string; description?: string; preview?: string }[];
        multi_select?: boolean;
        may_skip?: boolean;
        answer_format?: string;
      }[];
      message?: string;
    };
    if (!Array.isArray(parsed.questions)) return undefined;
    return {
      questions: parsed.questions.map((q) => ({
        question: String(q.question ?? ""),
        header: String(q.header ?? ""),
        ...(q.context !== undefined ? { context: String(q.context) } : {}),
        options: (q.options ?? []).map((o) => ({
          label: String(o.label ?? ""),
          description: String(o.description ?? ""),
          ...(o.preview !== undefined ? { preview: String(o.preview) } : {}),
        })),
        multiSelect: q.multi_select === true,
        ...(q.may_skip === true ? { maySkip: true } : {}),
        ...(q.answer_format !== undefined ? { answerFormat: String(q.answer_format) } : {}),
      })),
      ...(parsed.message !== undefined ? { message: String(parsed.message) } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * The typed AskUser answers carried in a result's metadata, if any (see `answersIn`: a declined
 * question's metadata, or another tool's, may hold anything).
 */
export function askUserAnswers(
  metadata: Record<string, unknown> | undefined,
): AskUserMetadata | undefined {
  const answers = answersIn(metadata);
  return answers ? { answers } : undefined;
}

export function toolCallToPb(call: ToolCallBlock): PbToolCallBlock {
  return {
    id: call.id,
    name: call.name,
    input: call.input,
    state: toolCallState.toPb(call.state),
    suggestedRules: (call.suggestedRules ?? []).map(ruleToPb),
    askUser: call.name === "AskUser" ? askUserInput(call.input) : undefined,
    decision: call.decision ? decisionToPb(call.decision) : undefined,
    expiresAt: call.expiresAt ? new Date(call.expiresAt) : undefined,
    ...(call.askedBy !== undefined ? { askedBy: call.askedBy } : {}),
  };
}

/** A data part's bytes or URL, as DataBlock and ToolResultDataDelta carry them. */
export function dataSource(
  part: DataPart,
): { $case: "data"; value: Buffer } | { $case: "url"; value: string } {
  return part.url !== undefined
    ? { $case: "url", value: part.url }
    : { $case: "data", value: Buffer.from(part.base64 ?? "", "base64") };
}

function blockToPb(block: Block): ContentBlock {
  switch (block.type) {
    case "text":
      return { block: { $case: "text", value: { id: block.id, text: block.text } } };
    case "thinking":
      return { block: { $case: "thinking", value: { id: block.id, thinking: block.thinking } } };
    case "tool_call":
      return { block: { $case: "toolCall", value: toolCallToPb(block) } };
    case "tool_result":
      return {
        block: {
          $case: "toolResult",
          value: {
            id: block.id,
            name: block.name,
            output: [
              { block: { $case: "text", value: { id: "", text: block.output } } },
              ...(block.data ?? []).map((part): ToolOutputBlock => ({
                block: {
                  $case: "data",
                  value: { id: "", mediaType: part.mediaType, source: dataSource(part) },
                },
              })),
            ],
            state: toolResultState.toPb(block.state),
            metadata: block.metadata,
            askUser: block.name === "AskUser" ? askUserAnswers(block.metadata) : undefined,
          },
        },
      };
  }
}

const ROLES = { user: Role.ROLE_USER, assistant: Role.ROLE_ASSISTANT, system: Role.ROLE_SYSTEM };

export function msgToPb(msg: Msg): PbMsg {
  return {
    id: msg.id,
    name: msg.name,
    role: ROLES[msg.role],
    content: msg.content.map(blockToPb),
    finishedReason: finishedReason.toPb(msg.finishedReason),
    usage: msg.usage,
    metadata: undefined,
    error: msg.error,
  };
}
