import { invalidArgument } from "../common/errors.js";
import { ruleProblems } from "../permissions/index.js";
import type { ClientEvent } from "../generated/parkway/v1/events.js";
import type { ReplyRequest } from "../generated/parkway/v1/agent_service.js";
import { confirmResultField, executionResultField } from "../session/answer-fields.js";
import type { ConfirmAnswer, ExternalAnswer } from "../session/reply-inputs.js";
import type { SessionInput } from "../session/session-input.js";
import type { ConfirmResult } from "../generated/parkway/v1/events.js";
import type { DataBlock, ToolResultBlock } from "../generated/parkway/v1/content.js";
import { type DataPart, dataPartProblem } from "../tools/data-part.js";
import { behavior, ruleScope, toolResultState } from "./mappers/enums.js";

function decodeConfirm(r: ConfirmResult, i: number): ConfirmAnswer {
  const field = confirmResultField(i);
  if (!r.toolCall?.id) {
    throw invalidArgument([{ field: `${field}.tool_call.id`, description: "is required" }]);
  }
  return {
    toolCallId: r.toolCall.id,
    confirmed: r.confirmed,
    ...(r.toolCall.input ? { editedInput: r.toolCall.input } : {}),
    rules: r.rules.map((rule, j) => {
      const b = Number(rule.behavior) === 0 ? "allow" : behavior.fromPb(rule.behavior);
      if (!b) {
        throw invalidArgument([
          { field: `${field}.rules[${j}].behavior`, description: "unknown behavior" },
        ]);
      }
      const scope = Number(rule.scope) === 0 ? "session" : ruleScope.fromPb(rule.scope);
      if (!scope) {
        throw invalidArgument([
          { field: `${field}.rules[${j}].scope`, description: "unknown scope" },
        ]);
      }
      // Rules are ignored when the call is denied; accepted ones must be rules the API would store.
      const problems = r.confirmed ? ruleProblems(rule) : [];
      if (problems.length > 0) {
        throw invalidArgument(
          problems.map((p) => ({
            field: `${field}.rules[${j}].${p.field}`,
            description: p.description,
          })),
        );
      }
      return {
        toolName: rule.toolName,
        ...(rule.ruleContent !== undefined ? { ruleContent: rule.ruleContent } : {}),
        behavior: b,
        scope,
      };
    }),
    reason: r.reason,
  };
}

/** A data block as a data part; INVALID_ARGUMENT naming `field` when the model could not take it. */
function decodeData(block: DataBlock, field: string): DataPart {
  const source = block.source;
  const problem = dataPartProblem(block.mediaType, {
    ...(source?.$case === "data" ? { bytes: source.value } : {}),
    ...(source?.$case === "url" ? { url: source.value } : {}),
  });
  if (problem) {
    throw invalidArgument([
      { field: `${field}.${problem.field}`, description: problem.description },
    ]);
  }
  return source?.$case === "url"
    ? { mediaType: block.mediaType, url: source.value }
    : { mediaType: block.mediaType, base64: Buffer.from(source!.value).toString("base64") };
}

function decodeResult(r: ToolResultBlock, i: number): ExternalAnswer {
  const field = executionResultField(i);
  if (!r.id) throw invalidArgument([{ field: `${field}.id`, description: "is required" }]);
  const state = Number(r.state) === 0 ? "success" : toolResultState.fromPb(r.state);
  if (!state || state === "running") {
    throw invalidArgument([
      { field: `${field}.state`, description: "must be SUCCESS, ERROR, DENIED or INTERRUPTED" },
    ]);
  }
  const texts: string[] = [];
  const data: DataPart[] = [];
  r.output.forEach((b, j) => {
    const at = `${field}.output[${j}]`;
    if (b.block?.$case === "text") {
      if (b.block.value.text !== "") texts.push(b.block.value.text);
    } else if (b.block?.$case === "data") {
      data.push(decodeData(b.block.value, `${at}.data`));
    } else {
      throw invalidArgument([{ field: at, description: "sets no block (text or data)" }]);
    }
  });
  const output = texts.join("\n");
  let metadata: Record<string, unknown> | undefined = r.metadata;
  if (r.askUser) {
    metadata = {
      ...metadata,
      answers: r.askUser.answers.map((a) => ({
        question: a.question,
        selected: a.selected,
        ...(a.other !== undefined ? { other: a.other } : {}),
      })),
    };
  }
  return {
    toolCallId: r.id,
    result: {
      state,
      output,
      ...(data.length > 0 ? { data } : {}),
      ...(metadata ? { metadata } : {}),
    },
  };
}

type Input = NonNullable<ClientEvent["event"]> | NonNullable<ReplyRequest["input"]>;

/** Decodes one client input into the session's terms; INVALID_ARGUMENT names a bad field. */
export function toSessionInput(input: Input | undefined, field: string): SessionInput {
  if (!input) {
    throw invalidArgument([{ field, description: "exactly one input must be set" }]);
  }
  switch (input.$case) {
    case "userMessage": {
      const parts = [input.value.text];
      input.value.content.forEach((block, i) => {
        if (block.block?.$case === "text") parts.push(block.block.value.text);
        else {
          throw invalidArgument([
            {
              field: `user_message.content[${i}]`,
              description: `is ${block.block ? `a ${block.block.$case} block` : "empty"}; a user message holds text blocks only`,
            },
          ]);
        }
      });
      const text = parts.filter((p) => p !== "").join("\n");
      if (text.trim() === "") {
        throw invalidArgument([
          { field: "user_message.text", description: "the message has no text" },
        ]);
      }
      return { kind: "user_message", text };
    }
    case "userInterrupt":
      return { kind: "user_interrupt", replyId: input.value.replyId };
    case "userConfirmResult":
      return {
        kind: "confirm",
        replyId: input.value.replyId,
        answers: input.value.confirmResults.map((r, i) => decodeConfirm(r, i)),
      };
    case "externalExecutionResult":
      return {
        kind: "external_results",
        replyId: input.value.replyId,
        answers: input.value.executionResults.map((r, i) => decodeResult(r, i)),
      };
    case "attach":
      throw invalidArgument([
        {
          field: "attach",
          description: "the stream is already attached; open a new stream to attach again",
        },
      ]);
  }
}
