import { z } from "zod";
import { permissionBehaviorSchema, ruleFields } from "../permissions/index.js";
import { dataPartSchema } from "../tools/data-part.js";

export type { DataPart } from "../tools/data-part.js";

/**
 * The conversation's domain model, shared by the agent loop, the session layer and its stored
 * records. Each type has a zod schema because it is stored and validated on read.
 */

export const toolCallStateSchema = z.enum([
  "pending",
  "asking",
  "allowed",
  "submitted",
  "finished",
]);
export type ToolCallState = z.infer<typeof toolCallStateSchema>;

export const toolResultStateSchema = z.enum([
  "success",
  "error",
  "interrupted",
  "denied",
  "running",
]);
export type ToolResultState = z.infer<typeof toolResultStateSchema>;

export const finishedReasonSchema = z.enum([
  "completed",
  "interrupted",
  "exceed_max_iters",
  "error",
]);
export type FinishedReason = z.infer<typeof finishedReasonSchema>;

export const failureSchema = z.object({ code: z.string(), message: z.string() });
export type Failure = z.infer<typeof failureSchema>;

export const usageSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative(),
  cacheWriteTokens: z.number().int().nonnegative(),
});
export type Usage = z.infer<typeof usageSchema>;

export const emptyUsage = (): Usage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

/** A permission rule as carried on tool calls (suggestions) and in decisions. */
export const ruleSchema = z.object({
  id: z.string().optional(),
  ...ruleFields,
  createdBy: z.string().optional(),
  createdAt: z.string().optional(),
  sessionId: z.string().optional(),
  agentId: z.string().optional(),
  toolCallId: z.string().optional(),
});
export type Rule = z.infer<typeof ruleSchema>;

/** What an external policy decision point answered (`result`), or how asking it failed. */
export const policyResultSchema = z.enum(["allow", "ask", "deny", "error", "timeout"]);
export type PolicyResult = z.infer<typeof policyResultSchema>;

/** The policy service's part in a decision: its answer, how long it took, what the engine said. */
export const policyOutcomeSchema = z.object({
  result: policyResultSchema,
  /** The service's reason, or what failed (e.g. "timed out after 2000 ms"). */
  reason: z.string().optional(),
  /** From sending the request to the answer (or the failure), in milliseconds. */
  latencyMs: z.number().nonnegative(),
  /** The engine's own behavior and check, before the service was asked. */
  engineBehavior: permissionBehaviorSchema,
  engineCheck: z.string(),
  /** True when the answer would have loosened the engine's decision and was ignored. */
  ignored: z.boolean().optional(),
});
export type PolicyOutcome = z.infer<typeof policyOutcomeSchema>;

/** Why the permission engine decided as it did. */
export const decisionSchema = z.object({
  behavior: permissionBehaviorSchema,
  reason: z.string(),
  rule: ruleSchema.optional(),
  check: z.string(),
  bypassImmune: z.boolean(),
  suggestedRules: z.array(ruleSchema),
  /** Set when an external policy decision point was asked (check "policy" when it changed it). */
  policy: policyOutcomeSchema.optional(),
});
export type DecisionInfo = z.infer<typeof decisionSchema>;

export const textBlockSchema = z.object({
  type: z.literal("text"),
  id: z.string(),
  text: z.string(),
});
export const thinkingBlockSchema = z.object({
  type: z.literal("thinking"),
  id: z.string(),
  thinking: z.string(),
});
export const toolCallBlockSchema = z.object({
  type: z.literal("tool_call"),
  /** Assigned by the server, unique within the session: every lookup and event uses it. */
  id: z.string(),
  /**
   * The id the model gave the call, sent back to the model with the call and its result; absent
   * when the model gave none or repeated one within its turn (the model is then sent `id`).
   */
  modelId: z.string().optional(),
  name: z.string(),
  /** The raw JSON input as the model sent it (or as a person edited it). */
  input: z.string(),
  state: toolCallStateSchema,
  suggestedRules: z.array(ruleSchema).optional(),
  decision: decisionSchema.optional(),
  /** ISO time after which a parked call expires. */
  expiresAt: z.string().optional(),
  /** True once TOOL_RESULT_START was emitted for it (never emitted twice). */
  resultStarted: z.boolean().optional(),
  /** Held back (no prompt of its own) until this earlier call of the batch is answered. */
  heldBy: z.string().optional(),
  /** Set when the model's input passed the block limit: its size; `input` is then empty. */
  inputDroppedBytes: z.number().int().optional(),
  /**
   * Set on an AskUser a running tool asks (an MCP server's elicitation): that call's id. The model
   * neither made nor sees it.
   */
  askedBy: z.string().optional(),
  /**
   * Set when a person confirmed the call with an input of their own: the policy service, if any,
   * is asked about that input before it runs (then the mark is removed).
   */
  inputEdited: z.literal(true).optional(),
});
export const toolResultBlockSchema = z.object({
  type: z.literal("tool_result"),
  id: z.string(),
  name: z.string(),
  output: z.string(),
  /** Data after the text, in order. */
  data: z.array(dataPartSchema).optional(),
  state: toolResultStateSchema,
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export const blockSchema = z.discriminatedUnion("type", [
  textBlockSchema,
  thinkingBlockSchema,
  toolCallBlockSchema,
  toolResultBlockSchema,
]);
export type TextBlock = z.infer<typeof textBlockSchema>;
export type ThinkingBlock = z.infer<typeof thinkingBlockSchema>;
export type ToolCallBlock = z.infer<typeof toolCallBlockSchema>;
export type ToolResultBlock = z.infer<typeof toolResultBlockSchema>;
export type Block = z.infer<typeof blockSchema>;

/** One message; an assistant reply accumulates into one message whose id is the reply id. */
export const msgSchema = z.object({
  id: z.string(),
  role: z.enum(["user", "assistant", "system"]),
  name: z.string(),
  content: z.array(blockSchema),
  finishedReason: finishedReasonSchema.optional(),
  usage: usageSchema.optional(),
  error: failureSchema.optional(),
  createdAt: z.string(),
});
export type Msg = z.infer<typeof msgSchema>;
