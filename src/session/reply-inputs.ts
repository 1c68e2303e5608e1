import { isoNow } from "../common/iso-now.js";
import type { EventBody } from "../agent/events.js";
import { messageBytes } from "../agent/reply-budget.js";
import { parseToolInput } from "../agent/tool-input.js";
import { finishWithoutRunning, startResult } from "../agent/tool-runner.js";
import type { Msg, Rule, ToolCallBlock } from "../agent/types.js";
import { findCalls } from "./answered-calls.js";
import { type FieldViolation, invalidArgument } from "../common/errors.js";
import { formatRule, type RuleScope } from "../permissions/index.js";
import { checkQuestionResult } from "../tools/ask-user.js";
import type { ExternalResult, Tool } from "../tools/tool.js";
import type { QuestionInput } from "../tools/tool-question.js";
import { denyingRule, refuseDenied } from "./answer-deny-rules.js";
import {
  CONFIRM_RESULTS,
  confirmResultField,
  EXECUTION_RESULTS,
  executionResultField,
} from "./answer-fields.js";
import type { RuleScopeKey } from "./rule-book.js";

/** One answer to a confirmation, decoded from the wire. */
export interface ConfirmAnswer {
  toolCallId: string;
  confirmed: boolean;
  /** The edited input, when the person changed it. */
  editedInput?: string;
  rules: (Rule & { scope?: RuleScope })[];
  reason: string;
}

/** One external execution result, decoded from the wire. */
export interface ExternalAnswer {
  toolCallId: string;
  result: ExternalResult;
}

/** What applying answers needs to know about the session. */
export interface AnswerContext {
  sessionId: string;
  agentId: string;
  tools: ReadonlyMap<string, Tool>;
  rules: readonly Rule[];
  workingDirectories: readonly string[];
  homeDir: string;
  principal: string;
  /** The agent's `maxReplyBytes`: an answer may not grow the reply's message past it. */
  maxReplyBytes: number;
  emit: (body: EventBody) => void;
}

/**
 * Refuses an answer that made `message` (the caller's copy) pass the agent's maxReplyBytes, with
 * INVALID_ARGUMENT naming `field`: nothing was committed yet, so nothing changes.
 */
function checkReplySize(message: Msg, ctx: AnswerContext, field: string): void {
  const bytes = messageBytes(message);
  if (bytes <= ctx.maxReplyBytes) return;
  throw invalidArgument([
    {
      field,
      description: `would make the reply ${bytes} bytes, over the agent's maxReplyBytes (${ctx.maxReplyBytes}): send less`,
    },
  ]);
}

function scopeOf(rule: ConfirmAnswer["rules"][number], ctx: AnswerContext): RuleScopeKey {
  switch (rule.scope) {
    case "agent":
      return { scope: "agent", agentId: ctx.agentId };
    case "tenant":
      return { scope: "tenant" };
    default:
      return { scope: "session", sessionId: ctx.sessionId };
  }
}

/**
 * Validates confirmation answers against the parked reply and applies them to `message` (a copy
 * the caller commits): a confirmed call becomes allowed (with its edited input, which must pass the
 * tool's schema and no deny rule), a denied call finishes DENIED with the reason the model sees.
 * Throws before changing anything when any answer is invalid. Returns the accepted rules to store.
 */
export function applyConfirmations(
  message: Msg,
  answers: ConfirmAnswer[],
  ctx: AnswerContext,
): { rule: Rule; key: RuleScopeKey }[] {
  const calls = findCalls(
    message,
    answers.map((a) => a.toolCallId),
    "asking",
    CONFIRM_RESULTS,
  );
  const violations: FieldViolation[] = [];
  answers.forEach((answer, i) => {
    const call = calls[i]!;
    const edited = answer.editedInput !== undefined && answer.editedInput !== call.input;
    // A deny rule added while the call waited holds: what it denies does not run.
    if (answer.confirmed && !edited) refuseDenied(call, ctx);
    if (answer.confirmed && edited) {
      const field = `${confirmResultField(i)}.tool_call.input`;
      const parsed = parseToolInput(ctx.tools.get(call.name), call.name, answer.editedInput ?? "");
      if (!parsed.ok) {
        violations.push({ field, description: parsed.error });
        return;
      }
      const rule = denyingRule(call.name, answer.editedInput ?? "", ctx);
      if (rule) {
        violations.push({
          field,
          description: `the edited input is denied by rule ${formatRule(rule)}`,
        });
      }
    }
    answer.rules.forEach((rule, j) => {
      if (!rule.toolName) {
        violations.push({
          field: `${confirmResultField(i)}.rules[${j}].tool_name`,
          description: "is required",
        });
      }
    });
  });
  if (violations.length > 0) throw invalidArgument(violations);

  const accepted: { rule: Rule; key: RuleScopeKey }[] = [];
  const now = isoNow();
  answers.forEach((answer, i) => {
    const call = calls[i]!;
    if (!answer.confirmed) {
      const text = answer.reason
        ? `The user denied this tool call: ${answer.reason}`
        : "The user denied this tool call.";
      message.content.push(finishWithoutRunning(call, "denied", text, ctx.emit));
      return;
    }
    if (answer.editedInput !== undefined && answer.editedInput !== call.input) {
      call.input = answer.editedInput;
      call.inputEdited = true;
      checkReplySize(message, ctx, `${confirmResultField(i)}.tool_call.input`);
    }
    call.state = "allowed";
    delete call.expiresAt;
    for (const rule of answer.rules) {
      accepted.push({
        key: scopeOf(rule, ctx),
        rule: {
          toolName: rule.toolName,
          ...(rule.ruleContent !== undefined ? { ruleContent: rule.ruleContent } : {}),
          behavior: rule.behavior,
          source: "confirmation",
          createdBy: ctx.principal,
          createdAt: now,
          sessionId: ctx.sessionId,
          toolCallId: call.id,
        },
      });
    }
  });
  return accepted;
}

/**
 * A client's result checked by its tool, or undefined when the tool checks nothing. A question a
 * running tool asked is checked as an AskUser, whatever the agent's tools.
 */
function checkResult(
  call: ToolCallBlock,
  result: ExternalResult,
  tools: ReadonlyMap<string, Tool>,
): ReturnType<NonNullable<Tool["checkExternalResult"]>> | undefined {
  if (call.askedBy !== undefined) {
    return checkQuestionResult(JSON.parse(call.input) as QuestionInput, result);
  }
  const tool = tools.get(call.name);
  if (!tool?.checkExternalResult) return undefined;
  const parsed = parseToolInput(tool, call.name, call.input);
  return tool.checkExternalResult(parsed.ok ? parsed.value : {}, result);
}

/**
 * Validates external results against the parked reply and applies them to `message`: each result's
 * output streams as TOOL_RESULT_TEXT_DELTA, its data as TOOL_RESULT_DATA_DELTA, then TOOL_RESULT_END with the caller's state and
 * metadata. A result whose metadata fails the tool's schema (or an AskUser answer that does not fit
 * its questions, or results that would pass the agent's maxReplyBytes) refuses the whole input with
 * INVALID_ARGUMENT naming the field.
 */
export function applyExternalResults(
  message: Msg,
  answers: ExternalAnswer[],
  ctx: AnswerContext,
): void {
  const calls = findCalls(
    message,
    answers.map((a) => a.toolCallId),
    "submitted",
    EXECUTION_RESULTS,
  );
  const violations: FieldViolation[] = [];
  const results = answers.map((answer, i) => {
    const call = calls[i]!;
    const checked = checkResult(call, answer.result, ctx.tools);
    if (!checked) return answer.result;
    for (const p of checked.problems) {
      violations.push({
        field: `${executionResultField(i)}.${p.field}`,
        description: p.description,
      });
    }
    return checked.result;
  });
  if (violations.length > 0) throw invalidArgument(violations);
  answers.forEach((_, i) => {
    const call = calls[i]!;
    const result = results[i]!;
    startResult(call, ctx.emit);
    if (result.output) {
      ctx.emit({ type: "tool_result_text_delta", toolCallId: call.id, delta: result.output });
    }
    for (const part of result.data ?? []) {
      ctx.emit({ type: "tool_result_data_delta", toolCallId: call.id, part });
    }
    ctx.emit({
      type: "tool_result_end",
      toolCallId: call.id,
      state: result.state,
      ...(result.metadata ? { metadata: result.metadata } : {}),
    });
    call.state = "finished";
    delete call.expiresAt;
    message.content.push({
      type: "tool_result",
      id: call.id,
      name: call.name,
      output: result.output,
      ...(result.data?.length ? { data: result.data } : {}),
      state: result.state,
      ...(result.metadata ? { metadata: result.metadata } : {}),
    });
    checkReplySize(message, ctx, executionResultField(i));
  });
}
