import type { ReplyEnv } from "./reply-loop.js";
import { partitionBatches, runToolCall } from "./tool-runner.js";
import type { ToolCallBlock, ToolResultBlock } from "./types.js";

/**
 * Processes a reply's open tool calls batch by batch (reference §4): a concurrent batch runs its
 * calls together, a sequential batch one at a time. Stops early when the signal aborts (the caller
 * then interrupts what is left). Resolves "done" when no call awaits an answer, "parked" otherwise.
 */
export async function processToolCalls(
  calls: ToolCallBlock[],
  env: ReplyEnv,
): Promise<"done" | "parked"> {
  const run = (call: ToolCallBlock): Promise<ToolResultBlock> => {
    call.state = "allowed";
    return runToolCall(call, {
      tools: env.agent.tools,
      workingDirectories: env.agent.workingDirectories,
      maxOutputBytes: env.agent.maxToolOutputBytes,
      signal: env.signal,
      emit: env.emit,
    }).then((result) => {
      env.message.content.push(result);
      return result;
    });
  };
  for (const batch of partitionBatches(calls, env.agent.tools)) {
    if (env.signal.aborted) break;
    if (batch.concurrent) await Promise.all(batch.calls.map(run));
    else for (const call of batch.calls) if (!env.signal.aborted) await run(call);
  }
  return "done";
}
