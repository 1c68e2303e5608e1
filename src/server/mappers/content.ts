import type { Block, DecisionInfo, Msg, Rule, ToolCallBlock } from "../../agent/types.js";
import {
  type ContentBlock,
  type Msg as PbMsg,
  Role,
  type ToolCallBlock as PbToolCallBlock,
} from "../../generated/parkway/v1/content.js";
import type {
  PermissionDecision as PbDecision,
  PermissionRule as PbRule,
} from "../../generated/parkway/v1/permission.js";
import {
  behavior,
  finishedReason,
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

export function decisionToPb(decision: DecisionInfo): PbDecision {
  return {
    behavior: behavior.toPb(decision.behavior),
    reason: decision.reason,
    rule: decision.rule ? ruleToPb(decision.rule) : undefined,
    check: decision.check,
    bypassImmune: decision.bypassImmune,
    suggestedRules: decision.suggestedRules.map(ruleToPb),
  };
}

export function toolCallToPb(call: ToolCallBlock): PbToolCallBlock {
  return {
    id: call.id,
    name: call.name,
    input: call.input,
    state: toolCallState.toPb(call.state),
    suggestedRules: (call.suggestedRules ?? []).map(ruleToPb),
    askUser: undefined,
    decision: call.decision ? decisionToPb(call.decision) : undefined,
    expiresAt: call.expiresAt ? new Date(call.expiresAt) : undefined,
  };
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
            output: [{ block: { $case: "text", value: { id: "", text: block.output } } }],
            state: toolResultState.toPb(block.state),
            metadata: block.metadata,
            askUser: undefined,
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
