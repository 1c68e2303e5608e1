import { DEFAULT_MAX_BLOCK_BYTES } from "./agent.js";
import { DEFAULT_MAX_REPLY_BYTES, ReplyBudget } from "./reply-budget.js";
import { decide, findHolder, readRuleOf } from "./gate.js";
import { consultPolicy } from "./policy-gate.js";
import type { ReplyEnv } from "./reply-env.js";
import { parseToolInput } from "./tool-input.js";
import { finishWithoutRunning, partitionBatches, runToolCall, startResult } from "./tool-runner.js";
import { askerFor } from "./tool-questions.js";
import type { DecisionInfo, ToolCallBlock } from "./types.js";
import { callSnapshot } from "./copies.js";

type Next = "run" | "wait" | "done";

function expiry(env: ReplyEnv): { expiresAt?: string } {
  const ms = env.agent.confirmTimeoutMs;
  return ms === undefined ? {} : { expiresAt: new Date(Date.now() + ms).toISOString() };
}

/** Hands an allowed external call to the client: TOOL_RESULT_START, REQUIRE_EXTERNAL_EXECUTION. */
function submit(call: ToolCallBlock, env: ReplyEnv): Next {
  call.state = "submitted";
  Object.assign(call, expiry(env));
  startResult(call, env.emit);
  env.emit({ type: "require_external_execution", toolCalls: [callSnapshot(call)] });
  return "wait";
}

/**
 * A call a person confirmed with an input of their own, once the policy service (if it was asked)
 * judged that input: `decided` denies it, or it runs (an external call is submitted).
 */
function editedCall(
  call: ToolCallBlock,
  env: ReplyEnv,
  external: boolean,
  decided: DecisionInfo | undefined,
): Next {
  delete call.inputEdited;
  if (decided) env.decided?.(call, decided);
  if (decided?.behavior === "deny") {
    call.decision = decided;
    const text = `Permission denied: ${decided.reason}`;
    env.message.content.push(finishWithoutRunning(call, "denied", text, env.emit));
    return "done";
  }
  return external ? submit(call, env) : "run";
}

/**
 * Moves one call as far as it can go without running it (reference §3–§5): an invalid input or a
 * denial finishes it; an ASK makes it ask (REQUIRE_USER_CONFIRM), or holds it behind an earlier
 * call of the batch whose suggested rule covers it; an allowed external call is submitted. Returns
 * "run" for an allowed server call, "wait" while it awaits an answer, "done" once finished.
 * `decided` is the decision the policy service had a part in, when it was asked about the call.
 */
function advance(
  call: ToolCallBlock,
  env: ReplyEnv,
  batch: readonly ToolCallBlock[],
  decided?: DecisionInfo,
): Next {
  const tool = env.agent.tools.get(call.name);
  switch (call.state) {
    case "finished":
      return "done";
    case "asking":
    case "submitted":
      return "wait";
    case "allowed":
      if (call.inputEdited) return editedCall(call, env, tool?.external === true, decided);
      return tool?.external ? submit(call, env) : "run";
    case "pending":
      break;
  }
  if (call.heldBy) {
    const holder = batch.find((c) => c.id === call.heldBy);
    if (holder?.state === "asking") return "wait";
    delete call.heldBy;
  }
  if (call.inputDroppedBytes !== undefined) {
    const limit = env.agent.maxBlockBytes ?? DEFAULT_MAX_BLOCK_BYTES;
    const text = `the input of ${call.name} was ${call.inputDroppedBytes} bytes, over the agent's maxBlockBytes (${limit}); it was not kept: call the tool again with a smaller input`;
    env.message.content.push(finishWithoutRunning(call, "error", text, env.emit));
    return "done";
  }
  const parsed = parseToolInput(tool, call.name, call.input, env.agent.tools.keys());
  if (!parsed.ok || !tool) {
    const text = parsed.ok ? "unknown tool" : parsed.error;
    env.message.content.push(finishWithoutRunning(call, "error", text, env.emit));
    return "done";
  }
  const state = env.permissions();
  const decision = decided ?? decide(call, tool, parsed.value, state);
  call.decision = decision;
  switch (decision.behavior) {
    case "deny":
      env.decided?.(call, decision);
      env.message.content.push(
        finishWithoutRunning(call, "denied", `Permission denied: ${decision.reason}`, env.emit),
      );
      return "done";
    case "ask": {
      const earlier = batch.slice(0, batch.indexOf(call));
      const holder = findHolder(
        call,
        parsed.value,
        decision,
        earlier,
        state,
        tool.external === true,
      );
      if (holder) {
        call.heldBy = holder.id;
        return "wait";
      }
      env.decided?.(call, decision);
      call.state = "asking";
      call.suggestedRules = decision.suggestedRules;
      Object.assign(call, expiry(env));
      env.emit({ type: "require_user_confirm", toolCalls: [callSnapshot(call)] });
      return "wait";
    }
    case "allow":
      env.decided?.(call, decision);
      call.state = "allowed";
      return tool.external ? submit(call, env) : "run";
  }
}

/** Kept free per result for its id, name, truncation note and metadata. */
const RESULT_RESERVE_BYTES = 1024;

/**
 * The output each of `count` calls about to run may produce: the agent's maxToolOutputBytes, or an
 * even share of what the reply's message may still take (less room for each result's own framing
 * and notes), whichever is less.
 */
function outputShare(env: ReplyEnv, count: number): number {
  const budget = ReplyBudget.of(env.message, env.agent.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES);
  const share = Math.floor(budget.remaining / Math.max(1, count)) - RESULT_RESERVE_BYTES;
  return Math.max(0, Math.min(env.agent.maxToolOutputBytes, share));
}

function run(call: ToolCallBlock, env: ReplyEnv, maxOutputBytes: number): Promise<void> {
  const ask = askerFor(call, env);
  const permissions = env.permissions();
  const readRule = readRuleOf(permissions, call, env.agent.tools.get(call.name));
  return runToolCall(call, {
    tools: env.agent.tools,
    workingDirectories: permissions.workingDirectories,
    maxOutputBytes,
    signal: env.toolSignal ?? env.signal,
    emit: env.emit,
    ...(ask ? { ask } : {}),
    ...(readRule ? { readRule } : {}),
  }).then((result) => {
    env.message.content.push(result);
  });
}

/**
 * Processes a reply's open tool calls batch by batch (reference §4). A concurrent batch evaluates
 * every call, runs the allowed ones together while the others ask, and blocks the batches after it
 * until all of its calls are finished. A sequential batch is one call: it runs, or blocks. Resolves
 * "parked" when something awaits an answer, "done" when every call is finished (or the signal
 * aborted; the caller then interrupts what is left).
 */
export async function processToolCalls(
  calls: ToolCallBlock[],
  env: ReplyEnv,
): Promise<"done" | "parked"> {
  const missing = calls.filter((c) => c.state !== "finished" && !env.agent.tools.has(c.name));
  if (missing.length > 0 && env.agent.awaitTools) {
    await env.agent.awaitTools(
      missing.map((c) => c.name),
      env.signal,
    );
  }
  for (const batch of partitionBatches(calls, env.agent.tools)) {
    if (env.signal.aborted) return "done";
    // Only with a policy service does deciding wait (for its answers, asked concurrently).
    const decided = env.policy ? await consultPolicy(batch.calls, env, env.policy) : undefined;
    if (env.signal.aborted) return "done";
    const next = batch.calls.map(
      (call) => [call, advance(call, env, batch.calls, decided?.get(call))] as const,
    );
    const runnable = next.filter(([, n]) => n === "run").map(([call]) => call);
    if (runnable.length > 0 && env.stored) {
      await env.stored;
      if (env.signal.aborted) return "done";
    }
    if (batch.concurrent) {
      const share = outputShare(env, runnable.length);
      await Promise.all(runnable.map((call) => run(call, env, share)));
    } else {
      for (const call of runnable) {
        if (!env.signal.aborted) await run(call, env, outputShare(env, 1));
      }
    }
    if (next.some(([, n]) => n === "wait")) return "parked";
  }
  return "done";
}
