import { DEFAULT_MAX_BLOCK_BYTES } from "./agent.js";
import type { ReplyEnv, ReplyOutcome } from "./reply-env.js";
import { runModelTurn } from "./model-turn.js";
import { toModelMessages } from "./to-model-messages.js";
import { processToolCalls } from "./process-tool-calls.js";
import {
  finishWithoutRunning,
  INTERRUPTED_TEXT,
  InterruptReason,
  interruptedText,
} from "./tool-runner.js";
import { type Failure, type FinishedReason, type Msg, type ToolCallBlock } from "./types.js";
import { addUsage } from "./usage.js";
import { toolSpecs } from "./tool-specs.js";
import { newId } from "../common/ids.js";

export type { ReplyEnv, ReplyOutcome } from "./reply-env.js";
import {
  BLOCK_OVERHEAD_BYTES,
  DEFAULT_MAX_REPLY_BYTES,
  REPLY_TOO_LARGE,
  ReplyBudget,
  replyCutMarker,
} from "./reply-budget.js";

function unfinished(message: Msg): ToolCallBlock[] {
  return message.content.filter(
    (b): b is ToolCallBlock => b.type === "tool_call" && b.state !== "finished",
  );
}

/**
 * Gives every unfinished call an INTERRUPTED result (TOOL_RESULT_START unless already sent, a text
 * delta saying so, TOOL_RESULT_END), as the reference does on an interrupt.
 */
export function interruptCalls(
  env: Pick<ReplyEnv, "message" | "emit">,
  text: string = INTERRUPTED_TEXT,
): void {
  for (const call of unfinished(env.message)) {
    env.message.content.push(finishWithoutRunning(call, "interrupted", text, env.emit));
  }
}

function finish(env: ReplyEnv, finishedReason: FinishedReason, error?: Failure): ReplyOutcome {
  if (finishedReason === "interrupted") interruptCalls(env, interruptedText(env.signal));
  env.message.finishedReason = finishedReason;
  if (error) env.message.error = error;
  return { kind: "finished", finishedReason, ...(error ? { error } : {}) };
}

/**
 * Ends a reply whose message reached `maxReplyBytes`: the last model call's tool calls are dropped
 * (their inputs may be cut; none runs), a text block with the marker says so to every client and,
 * in the next reply, to the model, and the outcome is ERROR with code `reply_too_large`.
 */
function finishTooLarge(env: ReplyEnv, maxBytes: number): ReplyOutcome {
  env.message.content = env.message.content.filter(
    (b) => b.type !== "tool_call" || b.state !== "pending",
  );
  const marker = { type: "text" as const, id: newId("blk"), text: replyCutMarker(maxBytes) };
  env.message.content.push(marker);
  env.emit({ type: "text_block_start", blockId: marker.id });
  env.emit({ type: "text_block_delta", blockId: marker.id, delta: marker.text });
  env.emit({ type: "text_block_end", blockId: marker.id });
  return finish(env, "error", {
    code: REPLY_TOO_LARGE,
    message: `the reply passed the agent's maxReplyBytes (${maxBytes} bytes)`,
  });
}

/**
 * Runs (or resumes) a reply: tool calls still open are processed first; then model call → tool
 * calls → again, until the model answers without tool calls (COMPLETED), the agent's max_iters is
 * reached (EXCEED_MAX_ITERS), the model fails or the message reaches `maxReplyBytes` (ERROR), the
 * signal aborts (INTERRUPTED), or a call awaits an answer (parked). It returns how the reply stopped
 * and emits neither REPLY_START nor REPLY_END: the reply's owner (the session) emits both, with the
 * records that make them true.
 */
export async function runReply(env: ReplyEnv): Promise<ReplyOutcome> {
  const { agent, message } = env;
  for (;;) {
    if (env.signal.aborted) return finish(env, "interrupted");
    const open = unfinished(message);
    if (open.length > 0) {
      const result = await processToolCalls(open, env);
      if (result === "parked") {
        // A user's interrupt that came while other calls of the batch ran ends the reply; a
        // shutdown leaves it parked, to be answered after the restart.
        const interrupted = env.signal.aborted && !(env.signal.reason instanceof InterruptReason);
        return interrupted ? finish(env, "interrupted") : { kind: "parked" };
      }
      continue;
    }
    if (env.progress.iteration >= agent.maxIters) {
      return finish(env, "exceed_max_iters", {
        code: "max_iters",
        message: `the reply reached the agent's limit of ${agent.maxIters} model calls`,
      });
    }
    const maxReplyBytes = agent.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
    const reply = ReplyBudget.of(message, maxReplyBytes);
    if (reply.remaining < BLOCK_OVERHEAD_BYTES) return finishTooLarge(env, maxReplyBytes);
    env.progress.iteration += 1;
    const turn = await runModelTurn({
      model: agent.model,
      messages: toModelMessages(agent.systemPrompt, env.history, message),
      tools: toolSpecs(agent.tools),
      message,
      signal: env.signal,
      emit: env.emit,
      maxBlockBytes: agent.maxBlockBytes ?? DEFAULT_MAX_BLOCK_BYTES,
      reply,
      ...(env.modelTrace ? { traceparent: env.modelTrace } : {}),
    });
    message.usage = addUsage(message.usage, turn.usage);
    if (turn.kind === "error") return finish(env, "error", turn.error);
    if (turn.kind === "interrupted") return finish(env, "interrupted");
    if (reply.over) return finishTooLarge(env, maxReplyBytes);
    if (turn.toolCalls.length === 0) return finish(env, "completed");
  }
}
