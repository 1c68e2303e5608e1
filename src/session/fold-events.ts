import type { EventBody } from "../agent/events.js";
import type {
  DataPart,
  Msg,
  TextBlock,
  ThinkingBlock,
  ToolCallBlock,
  ToolResultBlock,
} from "../agent/types.js";
import { addUsage } from "../agent/usage.js";

/**
 * Replays a reply's logged events onto a checkpoint of its message, giving the message as it was
 * when the last of those events was emitted: text and thinking blocks with their deltas, tool calls
 * with their inputs and states, results with their output, state and metadata. Pure; the event log
 * is the redo log of the reply record.
 */
export function foldEvents(checkpoint: Msg, events: readonly EventBody[]): Msg {
  const message = structuredClone(checkpoint);
  const calls = new Map<string, ToolCallBlock>();
  const results = new Map<string, ToolResultBlock>();
  const blocks = new Map<string, TextBlock | ThinkingBlock>();
  for (const block of message.content) {
    if (block.type === "tool_call") calls.set(block.id, block);
    else if (block.type === "tool_result") results.set(block.id, block);
    else blocks.set(block.id, block);
  }
  const partial = new Map<string, string>();
  const partialData = new Map<string, DataPart[]>();
  for (const body of events) {
    switch (body.type) {
      case "text_block_start": {
        const block: TextBlock = { type: "text", id: body.blockId, text: "" };
        blocks.set(block.id, block);
        message.content.push(block);
        break;
      }
      case "thinking_block_start": {
        const block: ThinkingBlock = { type: "thinking", id: body.blockId, thinking: "" };
        blocks.set(block.id, block);
        message.content.push(block);
        break;
      }
      case "text_block_delta": {
        const block = blocks.get(body.blockId);
        if (block?.type === "text") block.text += body.delta;
        break;
      }
      case "thinking_block_delta": {
        const block = blocks.get(body.blockId);
        if (block?.type === "thinking") block.thinking += body.delta;
        break;
      }
      case "tool_call_start": {
        const call: ToolCallBlock = {
          type: "tool_call",
          id: body.toolCallId,
          ...(body.modelId ? { modelId: body.modelId } : {}),
          name: body.toolCallName,
          input: "",
          state: "pending",
        };
        calls.set(call.id, call);
        message.content.push(call);
        break;
      }
      case "tool_call_delta": {
        const call = calls.get(body.toolCallId);
        if (call) call.input += body.delta;
        break;
      }
      case "tool_call_end": {
        const call = calls.get(body.toolCallId);
        if (call) call.input = body.input;
        break;
      }
      case "require_user_confirm":
      case "require_external_execution":
        for (const announced of body.toolCalls) {
          const call = calls.get(announced.id);
          if (call) Object.assign(call, structuredClone(announced));
        }
        break;
      case "tool_result_start": {
        const call = calls.get(body.toolCallId);
        if (call) call.resultStarted = true;
        partial.set(body.toolCallId, "");
        break;
      }
      case "tool_result_text_delta":
        partial.set(body.toolCallId, (partial.get(body.toolCallId) ?? "") + body.delta);
        break;
      case "tool_result_data_delta":
        partialData.set(body.toolCallId, [...(partialData.get(body.toolCallId) ?? []), body.part]);
        break;
      case "tool_result_end": {
        const call = calls.get(body.toolCallId);
        if (call) call.state = "finished";
        if (!results.has(body.toolCallId)) {
          const result: ToolResultBlock = {
            type: "tool_result",
            id: body.toolCallId,
            name: call?.name ?? "",
            output: partial.get(body.toolCallId) ?? "",
            ...(partialData.has(body.toolCallId) ? { data: partialData.get(body.toolCallId) } : {}),
            state: body.state,
            ...(body.metadata ? { metadata: body.metadata } : {}),
          };
          results.set(result.id, result);
          message.content.push(result);
        }
        break;
      }
      case "model_call_end":
        if (body.usage) message.usage = addUsage(message.usage, body.usage);
        break;
      case "reply_start":
      case "reply_end":
      case "reply_parked":
      case "model_call_start":
      case "text_block_end":
      case "thinking_block_end":
      case "error":
        break;
    }
  }
  return message;
}
