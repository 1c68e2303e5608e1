/**
 * The model seam: the agent loop sees this interface only, never a provider SDK. One adapter per
 * provider implements it (`openai-model.ts` for any OpenAI-compatible endpoint).
 */

/** Token counts reported by a model call. */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** A tool call as the model made it: `input` is the raw JSON text, possibly malformed. */
export interface ModelToolCall {
  id: string;
  name: string;
  input: string;
}

/** A part of a user message: text, or an image (an http(s) or data: URL). */
export type ModelContentPart = { type: "text"; text: string } | { type: "image"; url: string };

/** One message of the conversation sent to the model. */
export type ModelMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ModelContentPart[] }
  | { role: "assistant"; content: string; toolCalls: ModelToolCall[] }
  | { role: "tool"; toolCallId: string; content: string };

/** A tool offered to the model. */
export interface ModelToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the input object. */
  inputSchema: Record<string, unknown>;
}

/** One model call. */
export interface ModelRequest {
  messages: ModelMessage[];
  tools: ModelToolSpec[];
  /** Aborting stops the call; the stream then throws the signal's reason. */
  signal: AbortSignal;
  /**
   * The W3C trace context of the model call's span, when the reply is traced: an HTTP model sends
   * it as the `traceparent` header, so the provider's spans join the reply's trace.
   */
  traceparent?: string;
}

/**
 * What a streamed model response yields, in order. Tool calls are identified by `index` while they
 * stream (several may interleave); `tool_call_start` carries the id and name once known.
 */
export type ModelStreamEvent =
  | { type: "text_delta"; delta: string }
  | { type: "thinking_delta"; delta: string }
  | { type: "tool_call_start"; index: number; id: string; name: string }
  | { type: "tool_call_delta"; index: number; delta: string }
  | { type: "usage"; usage: ModelUsage }
  | { type: "done"; finishReason: string };

/** A chat model with streaming and tool calls. */
export interface Model {
  /** The model's name, reported in MODEL_CALL_START. */
  readonly name: string;
  /** Where it is served (a base URL), for logs; unset for models that run in the process. */
  readonly endpoint?: string;
  /**
   * Streams one response. Throws `ModelError` when the provider fails after its retries, and the
   * signal's reason when aborted.
   */
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent>;
}

/** The provider failed (after retries): unreachable, an error status, or a broken stream. */
export class ModelError extends Error {
  override readonly name = "ModelError";
  constructor(
    message: string,
    /** Stable code: "model_unavailable", "model_status", "model_stream", "model_timeout". */
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
