import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from "openai/core/error";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { chatRequestBody } from "./openai-body.js";
import { chatRequest } from "./openai-request.js";
import { modelFetch } from "./http-fetch.js";
import { completionChunks } from "./openai-sse.js";
import { type Model, ModelError, type ModelRequest, type ModelStreamEvent } from "./model.js";

/** How to reach an OpenAI-compatible Chat Completions endpoint. */
export interface OpenAIModelOptions {
  /** Base URL, e.g. https://api.openai.com/v1 or the scripted model's url. */
  baseURL: string;
  /** Model name sent with each request. */
  model: string;
  apiKey?: string;
  /**
   * Retries on connection errors, 408, 409, 429 and 5xx, after the wait the endpoint asks for
   * (`retry-after-ms`, `retry-after`) or a backoff (the openai SDK's policy, see `chatRequest`);
   * default 2.
   */
  maxRetries?: number;
  /**
   * Timeout in ms, default 10 minutes: for the response to start (per attempt, each retried), and
   * then between two streamed chunks (a stream that stalls ends with `model_timeout`).
   */
  timeoutMs?: number;
}

/** Reads the non-standard `reasoning_content` delta several OpenAI-compatible servers send. */
function reasoningOf(delta: ChatCompletionChunk.Choice.Delta): string | undefined {
  const value = (delta as { reasoning_content?: unknown }).reasoning_content;
  return typeof value === "string" && value !== "" ? value : undefined;
}

function toModelError(err: unknown, timeoutMs: number): ModelError {
  if (err instanceof APIConnectionTimeoutError) {
    return new ModelError(
      `the model endpoint did not answer within ${timeoutMs} ms (model.timeout)`,
      "model_timeout",
      { cause: err },
    );
  }
  if (err instanceof APIConnectionError) {
    return new ModelError(
      `the model endpoint is unreachable: ${err.message}`,
      "model_unavailable",
      {
        cause: err,
      },
    );
  }
  if (err instanceof APIError && err.status !== undefined) {
    return new ModelError(
      `the model endpoint answered ${err.status}: ${err.message}`,
      "model_status",
      { cause: err },
    );
  }
  return new ModelError(`the model stream failed: ${(err as Error).message}`, "model_stream", {
    cause: err,
  });
}

/** A `Model` over any OpenAI-compatible Chat Completions endpoint, streamed, with parallel tool calls. */
export function createOpenAIModel(options: OpenAIModelOptions): Model {
  const timeoutMs = options.timeoutMs ?? 10 * 60 * 1000;
  const post = chatRequest({
    baseURL: options.baseURL,
    apiKey: options.apiKey ?? "none",
    maxRetries: options.maxRetries ?? 2,
    timeoutMs,
    // A connection may take as long as the answer's headers, up to 10 s.
    fetch: modelFetch({ connectTimeoutMs: Math.min(timeoutMs, 10_000) }),
  });
  return {
    name: options.model,
    endpoint: options.baseURL,
    async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
      const started = new Set<number>();
      let finishReason: string | undefined;
      // The request's timeout ends when the headers arrive; this one watches the body.
      const stalled = () =>
        new ModelError(
          `the model endpoint sent nothing for ${timeoutMs} ms (model.timeout)`,
          "model_timeout",
        );
      const watch = new AbortController();
      const onAbort = () => watch.abort(request.signal.reason);
      request.signal.addEventListener("abort", onAbort, { once: true });
      if (request.signal.aborted) onAbort();
      // One timer, re-armed after each chunk (`refresh`, no new timer per chunk); while a chunk is
      // being handled it does not fire: a slow consumer is not a stalled model.
      let handling = false;
      let idle: NodeJS.Timeout | undefined;
      const touch = () => {
        idle ??= setTimeout(() => {
          if (handling) idle?.refresh();
          else watch.abort(stalled());
        }, timeoutMs);
        idle.refresh();
      };
      let complete = false;
      try {
        const response = await post(
          chatRequestBody(options.model, request.messages, request.tools),
          watch.signal,
          request.traceparent ? { traceparent: request.traceparent } : undefined,
        );
        touch();
        for await (const chunks of completionChunks(response)) {
          handling = true;
          try {
            for (const chunk of chunks) {
              if (chunk.usage) {
                yield {
                  type: "usage",
                  usage: {
                    inputTokens: chunk.usage.prompt_tokens,
                    outputTokens: chunk.usage.completion_tokens,
                    cacheReadTokens: chunk.usage.prompt_tokens_details?.cached_tokens ?? 0,
                    cacheWriteTokens: 0,
                  },
                };
              }
              const choice = chunk.choices[0];
              if (!choice) continue;
              const reasoning = reasoningOf(choice.delta);
              if (reasoning) yield { type: "thinking_delta", delta: reasoning };
              if (choice.delta.content) yield { type: "text_delta", delta: choice.delta.content };
              for (const call of choice.delta.tool_calls ?? []) {
                if (!started.has(call.index)) {
                  started.add(call.index);
                  yield {
                    type: "tool_call_start",
                    index: call.index,
                    id: call.id ?? "",
                    name: call.function?.name ?? "",
                  };
                }
                const args = call.function?.arguments;
                if (args) yield { type: "tool_call_delta", index: call.index, delta: args };
              }
              if (choice.finish_reason) finishReason = choice.finish_reason;
            }
          } finally {
            handling = false;
            touch();
          }
        }
        complete = true;
      } catch (err) {
        if (watch.signal.aborted || err instanceof APIUserAbortError) {
          throw watch.signal.reason ?? request.signal.reason ?? err;
        }
        throw toModelError(err, timeoutMs);
      } finally {
        clearTimeout(idle);
        request.signal.removeEventListener("abort", onAbort);
        // A stream left early (an error, or the caller stopped reading) ends the request.
        if (!complete) watch.abort(new Error("the model stream was left"));
      }
      // OpenAI sends the usage chunk after the finish_reason chunk: `done` comes last.
      yield { type: "done", finishReason: finishReason ?? "stop" };
    },
  };
}
