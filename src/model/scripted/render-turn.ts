import type { Turn } from "./script.js";

/** What shapes a rendered response besides the turn itself. */
export interface RenderOptions {
  /** The response id, `chatcmpl-…`. */
  id: string;
  /** Unix seconds. */
  created: number;
  model: string;
  /** Characters (code points) per streamed delta. */
  chunkSize: number;
  /** Add a final usage chunk (`stream_options.include_usage`); every other chunk then has `usage: null`. */
  includeUsage: boolean;
  /** The size of the request's messages in characters, for the token estimate. */
  promptChars: number;
  /** Makes the id of a tool call that has none in the script. */
  nextCallId: () => string;
}

/** A turn rendered the two ways OpenAI answers. */
export interface RenderedTurn {
  /** `chat.completion.chunk` objects in streaming order, without the `[DONE]` sentinel. */
  chunks: Record<string, unknown>[];
  /** The same response as one `chat.completion` object. */
  completion: Record<string, unknown>;
}

/**
 * Renders a turn as OpenAI does: a role chunk, `reasoning_content` deltas, `content` deltas, one start
 * chunk per tool call (id, type, name) followed by their argument fragments round-robin, a finish
 * chunk, and the usage chunk when asked for.
 */
export function renderTurn(turn: Turn, options: RenderOptions): RenderedTurn {
  const toolCalls = (turn.toolCalls ?? []).map((call) => ({
    id: call.id ?? options.nextCallId(),
    name: call.name,
    arguments: typeof call.input === "string" ? call.input : JSON.stringify(call.input),
  }));
  const finishReason = turn.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop");
  const outputChars =
    (turn.thinking?.length ?? 0) +
    (turn.text?.length ?? 0) +
    toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
  const usage = {
    prompt_tokens: turn.usage?.prompt_tokens ?? Math.ceil(options.promptChars / 4),
    completion_tokens: turn.usage?.completion_tokens ?? Math.ceil(outputChars / 4),
    total_tokens: 0,
    prompt_tokens_details: { cached_tokens: turn.usage?.cached_tokens ?? 0 },
  };
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;

  const envelope = {
    id: options.id,
    object: "chat.completion.chunk",
    created: options.created,
    model: options.model,
    system_fingerprint: null,
  };
  const chunks: Record<string, unknown>[] = [];
  const push = (delta: Record<string, unknown>, finish: string | null = null) =>
    chunks.push({
      ...envelope,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(options.includeUsage ? { usage: null } : {}),
    });

  push({ role: "assistant", content: turn.text === undefined ? null : "" });
  for (const piece of split(turn.thinking ?? "", options.chunkSize)) {
    push({ reasoning_content: piece });
  }
  for (const piece of split(turn.text ?? "", options.chunkSize)) push({ content: piece });
  toolCalls.forEach((call, index) =>
    push({
      tool_calls: [
        { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
      ],
    }),
  );
  const fragments = toolCalls.map((call) => split(call.arguments, options.chunkSize));
  const rounds = Math.max(0, ...fragments.map((f) => f.length));
  for (let round = 0; round < rounds; round++) {
    fragments.forEach((pieces, index) => {
      const piece = pieces[round];
      if (piece !== undefined) push({ tool_calls: [{ index, function: { arguments: piece } }] });
    });
  }
  push({}, finishReason);
  if (options.includeUsage) chunks.push({ ...envelope, choices: [], usage });

  const message: Record<string, unknown> = {
    role: "assistant",
    content: turn.text ?? null,
    refusal: null,
  };
  if (turn.thinking !== undefined) message.reasoning_content = turn.thinking;
  if (toolCalls.length > 0) {
    message.tool_calls = toolCalls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  const completion = {
    id: options.id,
    object: "chat.completion",
    created: options.created,
    model: options.model,
    system_fingerprint: null,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
    usage,
  };
  return { chunks, completion };
}

/** Splits text into pieces of `size` code points, so no piece breaks a surrogate pair. */
function split(text: string, size: number): string[] {
  const points = Array.from(text);
  const pieces: string[] = [];
  for (let i = 0; i < points.length; i += size) pieces.push(points.slice(i, i + size).join(""));
  return pieces;
}
