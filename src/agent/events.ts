import type {
  DataPart,
  Failure,
  FinishedReason,
  Msg,
  ToolCallBlock,
  ToolResultState,
  Usage,
} from "./types.js";

/**
 * What a reply emits, in the reference's order. The session layer gives each body a seq, logs it,
 * and fans it out; the transport maps it to a ServerEvent.
 */
export type EventBody =
  | { type: "reply_start"; name: string; role: "assistant" }
  | {
      type: "reply_end";
      finishedReason: FinishedReason;
      error?: Failure;
      /** The reply's usage over all its model calls; absent in events logged before it was kept. */
      usage?: Usage;
    }
  | { type: "model_call_start"; modelName: string }
  | { type: "model_call_end"; usage: Usage; finishedReason: FinishedReason }
  | { type: "text_block_start"; blockId: string }
  | { type: "text_block_delta"; blockId: string; delta: string }
  | { type: "text_block_end"; blockId: string }
  | { type: "thinking_block_start"; blockId: string }
  | { type: "thinking_block_delta"; blockId: string; delta: string }
  | { type: "thinking_block_end"; blockId: string }
  | {
      type: "tool_call_start";
      toolCallId: string;
      toolCallName: string;
      /** The model's own id for the call (stored for recovery, never sent to clients). */
      modelId?: string;
    }
  | { type: "tool_call_delta"; toolCallId: string; delta: string }
  | { type: "tool_call_end"; toolCallId: string; input: string }
  | { type: "tool_result_start"; toolCallId: string; toolCallName: string }
  | { type: "tool_result_text_delta"; toolCallId: string; delta: string }
  | { type: "tool_result_data_delta"; toolCallId: string; part: DataPart }
  | {
      type: "tool_result_end";
      toolCallId: string;
      state: ToolResultState;
      metadata?: Record<string, unknown>;
    }
  | { type: "require_user_confirm"; toolCalls: ToolCallBlock[] }
  | { type: "require_external_execution"; toolCalls: ToolCallBlock[] }
  | { type: "reply_parked"; message: Msg }
  | { type: "error"; code: string; message: string };

export type EventType = EventBody["type"];

/** Event bodies that are deltas: they may be written behind, in batches. */
export const DELTA_EVENTS: ReadonlySet<EventType> = new Set([
  "text_block_delta",
  "thinking_block_delta",
  "tool_call_delta",
  "tool_result_text_delta",
]);
