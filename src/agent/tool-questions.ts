import { newId } from "../common/ids.js";
import type { AskUserAnswer, ToolAnswer, ToolQuestion } from "../tools/tool-question.js";
import type { ReplyEnv } from "./reply-env.js";
import { finishWithoutRunning, startResult } from "./tool-runner.js";
import type { ToolCallBlock } from "./types.js";
import { callSnapshot } from "./copies.js";

/** The text of a question nobody answered because its tool stopped waiting or the reply stopped. */
export const WITHDRAWN_TEXT = "The question was withdrawn before it was answered.";

/**
 * What a running call's tool uses to ask the person (`ToolContext.ask`): each question becomes an
 * AskUser call of the reply, asked by `call` (TOOL_CALL_*, TOOL_RESULT_START and
 * REQUIRE_EXTERNAL_EXECUTION), and the reply parks on it while the tool waits. An answer stored
 * by the session resolves it; when `signal` aborts first the question ends INTERRUPTED.
 */
export function askerFor(
  call: ToolCallBlock,
  env: Pick<ReplyEnv, "message" | "emit" | "ask">,
): ((question: ToolQuestion, signal: AbortSignal) => Promise<ToolAnswer>) | undefined {
  const ask = env.ask;
  if (!ask) return undefined;
  return async (question, signal) => {
    if (signal.aborted) return { state: "interrupted" };
    const input = JSON.stringify(question.input);
    const block: ToolCallBlock = {
      type: "tool_call",
      id: newId("call"),
      name: "AskUser",
      input,
      state: "submitted",
      askedBy: call.id,
    };
    env.emit({ type: "tool_call_start", toolCallId: block.id, toolCallName: block.name });
    env.emit({ type: "tool_call_delta", toolCallId: block.id, delta: input });
    env.emit({ type: "tool_call_end", toolCallId: block.id, input });
    env.message.content.push(block);
    startResult(block, env.emit);
    env.emit({ type: "require_external_execution", toolCalls: [callSnapshot(block)] });
    const result = await ask(block, question.check, signal);
    if (!result) {
      if (block.state !== "finished") {
        env.message.content.push(
          finishWithoutRunning(block, "interrupted", WITHDRAWN_TEXT, env.emit),
        );
      }
      return { state: "interrupted" };
    }
    if (result.state === "running") return { state: "interrupted" };
    if (result.state !== "success") return { state: result.state };
    const answers = result.metadata?.answers;
    return {
      state: "success",
      answers: Array.isArray(answers) ? (answers as AskUserAnswer[]) : [],
    };
  };
}
