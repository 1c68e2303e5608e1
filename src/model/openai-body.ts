import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { ModelMessage, ModelToolSpec } from "./model.js";

/** A model message as the Chat Completions API takes it. */
function toParam(m: ModelMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case "system":
      return { role: m.role, content: m.content };
    case "user":
      return {
        role: "user",
        content:
          typeof m.content === "string"
            ? m.content
            : m.content.map((part) =>
                part.type === "text"
                  ? { type: "text" as const, text: part.text }
                  : { type: "image_url" as const, image_url: { url: part.url } },
              ),
      };
    case "tool":
      return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
    case "assistant":
      return {
        role: "assistant",
        content: m.content === "" ? null : m.content,
        ...(m.toolCalls.length > 0
          ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: "function" as const,
                function: { name: c.name, arguments: c.input },
              })),
            }
          : {}),
      };
  }
}

function toTool(t: ModelToolSpec): ChatCompletionTool {
  return {
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.inputSchema },
  };
}

/**
 * The JSON of each message and tool, made once per object. A session's history and its agent's
 * tools are the same objects on every model call (`toModelMessages`, `toolSpecs` keep them), so a
 * request encodes only what is new since the last one, not the whole conversation again.
 */
const encoded = new WeakMap<ModelMessage | ModelToolSpec, string>();

function jsonOf<T extends ModelMessage | ModelToolSpec>(item: T, convert: (item: T) => object) {
  let json = encoded.get(item);
  if (json === undefined) {
    json = JSON.stringify(convert(item));
    encoded.set(item, json);
  }
  return json;
}

/**
 * The body of a streamed Chat Completions request (`stream: true`, usage included, parallel tool
 * calls when there are tools), as JSON: the same as `JSON.stringify` of the params, with the
 * messages and tools put in from their encodings made once (see `encoded`).
 */
export function chatRequestBody(
  model: string,
  messages: readonly ModelMessage[],
  tools: readonly ModelToolSpec[],
): string {
  const rest: Omit<ChatCompletionCreateParamsStreaming, "messages" | "tools"> = {
    model,
    stream: true,
    stream_options: { include_usage: true },
    ...(tools.length > 0 ? { parallel_tool_calls: true } : {}),
  };
  const listed = messages.map((m) => jsonOf(m, toParam)).join(",");
  const offered =
    tools.length > 0 ? `"tools":[${tools.map((t) => jsonOf(t, toTool)).join(",")}],` : "";
  return `{"messages":[${listed}],${offered}${JSON.stringify(rest).slice(1)}`;
}
