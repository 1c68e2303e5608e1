import type { EventBody } from "../../agent/events.js";
import { Role } from "../../generated/parkway/v1/content.js";
import type { ServerEvent } from "../../generated/parkway/v1/events.js";
import type { StoredEvent } from "../../session/stored-event.js";
import { askUserAnswers, dataSource, msgToPb, toolCallToPb } from "./content.js";
import { finishedReason, toolResultState } from "./enums.js";

type Payload = ServerEvent["event"];

function payload(body: EventBody): Payload {
  switch (body.type) {
    case "reply_start":
      return { $case: "replyStart", value: { name: body.name, role: Role.ROLE_ASSISTANT } };
    case "reply_end":
      return {
        $case: "replyEnd",
        value: {
          finishedReason: finishedReason.toPb(body.finishedReason),
          error: body.error,
          usage: body.usage,
        },
      };
    case "model_call_start":
      return { $case: "modelCallStart", value: { modelName: body.modelName } };
    case "model_call_end":
      return {
        $case: "modelCallEnd",
        value: { usage: body.usage, finishedReason: finishedReason.toPb(body.finishedReason) },
      };
    case "text_block_start":
      return { $case: "textBlockStart", value: { blockId: body.blockId } };
    case "text_block_delta":
      return { $case: "textBlockDelta", value: { blockId: body.blockId, delta: body.delta } };
    case "text_block_end":
      return { $case: "textBlockEnd", value: { blockId: body.blockId } };
    case "thinking_block_start":
      return { $case: "thinkingBlockStart", value: { blockId: body.blockId } };
    case "thinking_block_delta":
      return { $case: "thinkingBlockDelta", value: { blockId: body.blockId, delta: body.delta } };
    case "thinking_block_end":
      return { $case: "thinkingBlockEnd", value: { blockId: body.blockId } };
    case "tool_call_start":
      return {
        $case: "toolCallStart",
        value: { toolCallId: body.toolCallId, toolCallName: body.toolCallName },
      };
    case "tool_call_delta":
      return { $case: "toolCallDelta", value: { toolCallId: body.toolCallId, delta: body.delta } };
    case "tool_call_end":
      return { $case: "toolCallEnd", value: { toolCallId: body.toolCallId, input: body.input } };
    case "tool_result_start":
      return {
        $case: "toolResultStart",
        value: { toolCallId: body.toolCallId, toolCallName: body.toolCallName },
      };
    case "tool_result_text_delta":
      return {
        $case: "toolResultTextDelta",
        value: { toolCallId: body.toolCallId, delta: body.delta },
      };
    case "tool_result_data_delta":
      return {
        $case: "toolResultDataDelta",
        value: {
          toolCallId: body.toolCallId,
          mediaType: body.part.mediaType,
          source: dataSource(body.part),
        },
      };
    case "tool_result_end":
      return {
        $case: "toolResultEnd",
        value: {
          toolCallId: body.toolCallId,
          state: toolResultState.toPb(body.state),
          metadata: body.metadata,
          askUser: askUserAnswers(body.metadata),
        },
      };
    case "require_user_confirm":
      return {
        $case: "requireUserConfirm",
        value: { toolCalls: body.toolCalls.map(toolCallToPb) },
      };
    case "require_external_execution":
      return {
        $case: "requireExternalExecution",
        value: { toolCalls: body.toolCalls.map(toolCallToPb) },
      };
    case "reply_parked":
      return { $case: "replyParked", value: { message: msgToPb(body.message) } };
    case "error":
      return { $case: "error", value: { code: body.code, message: body.message } };
  }
}

/** Maps a logged session event to the wire. */
export function eventToPb(event: StoredEvent): ServerEvent {
  return {
    id: event.id,
    seq: event.seq,
    sessionId: event.sessionId,
    replyId: event.replyId,
    createdAt: new Date(event.createdAt),
    replayed: event.replayed === true,
    event: payload(event.body),
  };
}
