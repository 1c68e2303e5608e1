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

/** A body made ahead (`prepareChatRequestBody`), with what it was made of. */
interface PreparedBody {
  model: string;
  messages: readonly ModelMessage[];
  tools: readonly ModelToolSpec[];
  body: string;
}

/**
 * Most bodies made ahead and not taken yet: one is taken within a turn or two of being made, so a
 * body whose request never came (its reply interrupted first) is dropped once this many newer
 * ones were made, rather than kept as long as its conversation.
 */
export const PREPARED_KEPT = 64;

/** The bodies made ahead, by the last message of their conversation; each is taken once. */
const prepared = new Map<ModelMessage, PreparedBody>();

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Makes the body of a request ahead of it: the next `chatRequestBody` of the same model, messages
 * and tools (the same objects, in the same order) returns it without encoding anything.
 */
export function prepareChatRequestBody(
  model: string,
  messages: readonly ModelMessage[],
  tools: readonly ModelToolSpec[],
): void {
  const last = messages.at(-1);
  if (!last) return;
  if (prepared.size >= PREPARED_KEPT) prepared.delete(prepared.keys().next().value!);
  prepared.set(last, { model, messages, tools, body: build(model, messages, tools) });
}

/**
 * The body of a streamed Chat Completions request (`stream: true`, usage included, parallel tool
 * calls when there are tools), as JSON: the same as `JSON.stringify` of the params, with the
 * messages and tools put in from their encodings made once (see `encoded`), or the body made
 * ahead for them (`prepareChatRequestBody`).
 */
export function chatRequestBody(
  model: string,
  messages: readonly ModelMessage[],
  tools: readonly ModelToolSpec[],
): string {
  const last = messages.at(-1);
  const ahead = last && prepared.get(last);
  if (ahead) {
    prepared.delete(last);
    const same =
      ahead.model === model && sameItems(ahead.messages, messages) && sameItems(ahead.tools, tools);
    if (same) return ahead.body;
  }
  return build(model, messages, tools);
}

function build(
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
