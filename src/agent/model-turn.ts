import { newId } from "../common/ids.js";
import { type Model, ModelError, type ModelMessage, type ModelToolSpec } from "../model/model.js";
import { BlockBudget, cutMarker } from "./block-budget.js";
import { BLOCK_OVERHEAD_BYTES, inputFactor, type ReplyBudget } from "./reply-budget.js";
import type { EventBody } from "./events.js";
import {
  emptyUsage,
  type Failure,
  type Msg,
  type TextBlock,
  type ThinkingBlock,
  type ToolCallBlock,
  type Usage,
} from "./types.js";

/** How a model call ended. */
export type TurnOutcome =
  | { kind: "completed"; toolCalls: ToolCallBlock[]; usage: Usage }
  | { kind: "interrupted"; toolCalls: ToolCallBlock[]; usage: Usage }
  | { kind: "error"; error: Failure; usage: Usage };

/**
 * Runs one model call and streams it as events: MODEL_CALL_START, text/thinking blocks and tool
 * calls as they arrive (parallel calls interleave), then every TOOL_CALL_END together, then
 * MODEL_CALL_END. Blocks are appended to `message` as they start. On abort the open blocks are
 * closed and MODEL_CALL_END reports INTERRUPTED; on a model failure the incomplete tool calls are
 * removed from `message` and the error is returned, not thrown.
 */
export async function runModelTurn(args: {
  model: Model;
  messages: ModelMessage[];
  tools: ModelToolSpec[];
  message: Msg;
  signal: AbortSignal;
  emit: (body: EventBody) => void;
  /** Most bytes one block may hold (see `AgentDefinition.maxBlockBytes`). */
  maxBlockBytes: number;
  /**
   * What the reply's message may still take: once the model passes it, its output is cut there,
   * the stream is left, and `reply.over` tells the caller (MODEL_CALL_END reports ERROR).
   */
  reply: ReplyBudget;
  /** The trace context the model request carries, read once MODEL_CALL_START is emitted. */
  traceparent?: () => string | undefined;
}): Promise<TurnOutcome> {
  const { model, message, emit, signal, maxBlockBytes, reply } = args;
  let text: TextBlock | undefined;
  let thinking: ThinkingBlock | undefined;
  let budget = new BlockBudget(maxBlockBytes);
  const calls = new Map<number, ToolCallBlock>();
  const callBudgets = new Map<number, BlockBudget>();
  let usage = emptyUsage();

  const closeText = () => {
    if (text) emit({ type: "text_block_end", blockId: text.id });
    text = undefined;
  };
  const closeThinking = () => {
    if (thinking) emit({ type: "thinking_block_end", blockId: thinking.id });
    thinking = undefined;
  };
  const endCalls = () => {
    for (const call of calls.values()) {
      emit({ type: "tool_call_end", toolCallId: call.id, input: call.input });
    }
  };

  emit({ type: "model_call_start", modelName: model.name });
  const traceparent = args.traceparent?.();
  try {
    for await (const event of model.stream({
      messages: args.messages,
      tools: args.tools,
      signal,
      ...(traceparent ? { traceparent } : {}),
    })) {
      switch (event.type) {
        case "thinking_delta": {
          closeText();
          if (!thinking) {
            if (!reply.charge(BLOCK_OVERHEAD_BYTES)) break;
            thinking = { type: "thinking", id: newId("blk"), thinking: "" };
            budget = new BlockBudget(maxBlockBytes);
            message.content.push(thinking);
            emit({ type: "thinking_block_start", blockId: thinking.id });
          }
          const kept = reply.take(budget.take(event.delta, cutMarker));
          if (kept === "") break;
          thinking.thinking += kept;
          emit({ type: "thinking_block_delta", blockId: thinking.id, delta: kept });
          break;
        }
        case "text_delta": {
          closeThinking();
          if (!text) {
            if (!reply.charge(BLOCK_OVERHEAD_BYTES)) break;
            text = { type: "text", id: newId("blk"), text: "" };
            budget = new BlockBudget(maxBlockBytes);
            message.content.push(text);
            emit({ type: "text_block_start", blockId: text.id });
          }
          const kept = reply.take(budget.take(event.delta, cutMarker));
          if (kept === "") break;
          text.text += kept;
          emit({ type: "text_block_delta", blockId: text.id, delta: kept });
          break;
        }
        case "tool_call_start": {
          closeThinking();
          closeText();
          // Models reuse their ids across turns and restarts: the server names every call itself
          // and keeps the model's id only to send it back to the model.
          const taken = [...calls.values()].some((c) => c.modelId === event.id);
          const modelId = event.id && !taken ? event.id : undefined;
          const call: ToolCallBlock = {
            type: "tool_call",
            id: newId("call"),
            ...(modelId ? { modelId } : {}),
            name: event.name,
            input: "",
            state: "pending",
          };
          if (!reply.charge(BLOCK_OVERHEAD_BYTES + 2 * (call.id.length + call.name.length))) break;
          calls.set(event.index, call);
          callBudgets.set(event.index, new BlockBudget(maxBlockBytes));
          message.content.push(call);
          emit({
            type: "tool_call_start",
            toolCallId: call.id,
            toolCallName: call.name,
            ...(modelId ? { modelId } : {}),
          });
          break;
        }
        case "tool_call_delta": {
          const call = calls.get(event.index);
          const callBudget = callBudgets.get(event.index);
          if (!call || !callBudget) break;
          // An input past the limit is dropped whole: a cut JSON input means nothing.
          const kept = callBudget.take(event.delta, () => "");
          if (callBudget.over) {
            call.input = "";
            call.inputDroppedBytes = callBudget.sent;
            break;
          }
          // A cut input means nothing: past the reply's budget the call is left as it is.
          if (reply.take(kept, inputFactor(call.name)) !== kept) break;
          call.input += kept;
          emit({ type: "tool_call_delta", toolCallId: call.id, delta: kept });
          break;
        }
        case "usage":
          usage = event.usage;
          break;
        case "done":
          break;
      }
      if (reply.over) break;
    }
  } catch (err) {
    closeThinking();
    closeText();
    if (signal.aborted) {
      endCalls();
      emit({ type: "model_call_end", usage, finishedReason: "interrupted" });
      return { kind: "interrupted", toolCalls: [...calls.values()], usage };
    }
    const incomplete = new Set(calls.values());
    message.content = message.content.filter((b) => !incomplete.has(b as ToolCallBlock));
    emit({ type: "model_call_end", usage, finishedReason: "error" });
    const error: Failure =
      err instanceof ModelError
        ? { code: err.code, message: err.message }
        : { code: "model_failed", message: `the model call failed: ${(err as Error).message}` };
    return { kind: "error", error, usage };
  }
  closeThinking();
  closeText();
  endCalls();
  const interrupted = signal.aborted;
  emit({
    type: "model_call_end",
    usage,
    finishedReason: interrupted ? "interrupted" : reply.over ? "error" : "completed",
  });
  return { kind: interrupted ? "interrupted" : "completed", toolCalls: [...calls.values()], usage };
}
