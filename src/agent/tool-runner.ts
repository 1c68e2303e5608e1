import type { Tool, ToolContext } from "../tools/tool.js";
import type { EventBody } from "./events.js";
import { parseToolInput } from "./tool-input.js";
import type { DataPart, ToolCallBlock, ToolResultBlock, ToolResultState } from "./types.js";

/** What running a server tool needs from the reply. */
export interface ToolRunEnv {
  tools: ReadonlyMap<string, Tool>;
  workingDirectories: readonly string[];
  maxOutputBytes: number;
  signal: AbortSignal;
  emit: (body: EventBody) => void;
  /** How the tool asks the person a question while it runs; absent where nobody can be asked. */
  ask?: ToolContext["ask"];
  /** The rules that keep files out of a search (see `ToolContext.readRule`). */
  readRule?: ToolContext["readRule"];
}

/** The text a result carries when a call was stopped by an interrupt. */
export const INTERRUPTED_TEXT = "The tool call was interrupted by the user.";

/** An abort reason that says, in the results of the calls it interrupts, why they stopped. */
export class InterruptReason extends Error {
  override readonly name = "InterruptReason";
  constructor(
    message: string,
    /** The text an interrupted call's result carries. */
    readonly resultText: string,
  ) {
    super(message);
  }
}

/** The text an interrupted call's result carries: the abort reason's, or `INTERRUPTED_TEXT`. */
export function interruptedText(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof InterruptReason ? reason.resultText : INTERRUPTED_TEXT;
}

/** Emits TOOL_RESULT_START once per call. */
export function startResult(call: ToolCallBlock, emit: (body: EventBody) => void): void {
  if (call.resultStarted) return;
  call.resultStarted = true;
  emit({ type: "tool_result_start", toolCallId: call.id, toolCallName: call.name });
}

/**
 * Finishes a call with a result that did not come from running it (an invalid input, a denial, an
 * interrupt): START (unless already sent), the text as one delta, END with the state.
 */
export function finishWithoutRunning(
  call: ToolCallBlock,
  state: ToolResultState,
  text: string,
  emit: (body: EventBody) => void,
  metadata?: Record<string, unknown>,
): ToolResultBlock {
  startResult(call, emit);
  emit({ type: "tool_result_text_delta", toolCallId: call.id, delta: text });
  emit({ type: "tool_result_end", toolCallId: call.id, state, ...(metadata ? { metadata } : {}) });
  call.state = "finished";
  return {
    type: "tool_result",
    id: call.id,
    name: call.name,
    output: text,
    state,
    ...(metadata ? { metadata } : {}),
  };
}

/**
 * Runs one allowed server tool call: TOOL_RESULT_START, its output as TOOL_RESULT_TEXT_DELTA while it
 * runs, TOOL_RESULT_END. An input that fails its schema becomes an error result without running.
 * An interrupt during the run ends it with state INTERRUPTED.
 */
export async function runToolCall(call: ToolCallBlock, env: ToolRunEnv): Promise<ToolResultBlock> {
  const tool = env.tools.get(call.name);
  const parsed = parseToolInput(tool, call.name, call.input, env.tools.keys());
  if (!parsed.ok || !tool) {
    return finishWithoutRunning(call, "error", parsed.ok ? "unknown tool" : parsed.error, env.emit);
  }
  startResult(call, env.emit);
  let streamed = "";
  const emitText = (delta: string) => {
    if (delta === "") return;
    streamed += delta;
    env.emit({ type: "tool_result_text_delta", toolCallId: call.id, delta });
  };
  let state: ToolResultState;
  let output: string;
  let metadata: Record<string, unknown> | undefined;
  let data: DataPart[] = [];
  try {
    const result = await tool.run(parsed.value, {
      signal: env.signal,
      workingDirectories: env.workingDirectories,
      emitText,
      maxOutputBytes: env.maxOutputBytes,
      ...(env.ask ? { ask: env.ask } : {}),
      ...(env.readRule ? { readRule: env.readRule } : {}),
    });
    state = env.signal.aborted ? "interrupted" : result.state;
    output = result.output;
    metadata = result.metadata;
    data = result.data ?? [];
  } catch (err) {
    state = env.signal.aborted ? "interrupted" : "error";
    output = env.signal.aborted ? "" : `the tool failed: ${(err as Error).message}`;
  }
  if (state === "interrupted") {
    const text = interruptedText(env.signal);
    output = output ? `${output}\n${text}` : text;
  }
  // What the tool did not stream is sent now, so the deltas always add up to the output.
  const rest = output.startsWith(streamed) ? output.slice(streamed.length) : `\n${output}`;
  emitText(rest);
  for (const part of data) {
    env.emit({ type: "tool_result_data_delta", toolCallId: call.id, part });
  }
  env.emit({
    type: "tool_result_end",
    toolCallId: call.id,
    state,
    ...(metadata ? { metadata } : {}),
  });
  call.state = "finished";
  return {
    type: "tool_result",
    id: call.id,
    name: call.name,
    output: streamed,
    ...(data.length > 0 ? { data } : {}),
    state,
    ...(metadata ? { metadata } : {}),
  };
}

/**
 * Splits calls into batches (reference §4): consecutive concurrency-safe calls form one concurrent
 * batch; every other call is a sequential batch of its own. A call whose input is invalid or whose
 * tool is unknown does nothing, so it counts as concurrency-safe.
 */
export function partitionBatches(
  calls: readonly ToolCallBlock[],
  tools: ReadonlyMap<string, Tool>,
): { concurrent: boolean; calls: ToolCallBlock[] }[] {
  const batches: { concurrent: boolean; calls: ToolCallBlock[] }[] = [];
  for (const call of calls) {
    const tool = tools.get(call.name);
    const parsed = parseToolInput(tool, call.name, call.input);
    const safe = !parsed.ok || !tool || tool.isConcurrencySafe(parsed.value);
    const last = batches[batches.length - 1];
    if (safe && last?.concurrent) last.calls.push(call);
    else batches.push({ concurrent: safe, calls: [call] });
  }
  return batches;
}
