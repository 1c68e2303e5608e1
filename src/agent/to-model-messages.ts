import type { ModelContentPart, ModelMessage, ModelToolCall } from "../model/model.js";
import { dataPartText, essence, imageUrl, isImage } from "../tools/data-part.js";
import type { Msg, ToolResultBlock } from "./types.js";

/**
 * What the tool message carries for a result: its text, then each text document it holds, headed
 * by its media type. Images cannot go in a tool message; `toolImages` gives them.
 */
function toolText(result: ToolResultBlock): string {
  const documents = (result.data ?? [])
    .filter((part) => !isImage(part))
    .map((part) => `[${essence(part.mediaType)}]\n${dataPartText(part)}`);
  return [result.output, ...documents].filter((t) => t !== "").join("\n\n");
}

/** A result with the id the model knows its call by. */
interface Answered {
  result: ToolResultBlock;
  modelId: string;
}

/** The images of the results, for a user message after the tool messages (as the API allows). */
function toolImages(answered: Answered[]): ModelContentPart[] {
  const parts: ModelContentPart[] = [];
  for (const { result, modelId } of answered) {
    const images = (result.data ?? []).filter(isImage);
    if (images.length === 0) continue;
    parts.push({ type: "text", text: `Images returned by ${result.name} (${modelId}):` });
    for (const image of images) parts.push({ type: "image", url: imageUrl(image) });
  }
  return parts;
}

/**
 * Turns the conversation (the `history` before the reply, and the reply's own message `current`
 * as it stands) into the model's messages. An assistant message becomes one model message
 * per iteration (its text and tool calls) followed by one tool message per result (and one user
 * message with the images the results returned, which a tool message cannot carry). A tool call
 * without a result (a reply cut short by an error) and a result without its call are left out, so
 * the history the model sees is always well-formed. A call and its result carry the model's own id
 * for the call when it gave one (the server's id otherwise), so each turn reads back as the model
 * wrote it, even when the model reuses its ids from turn to turn.
 */
export function toModelMessages(
  systemPrompt: string,
  history: readonly Msg[],
  current?: Msg,
): ModelMessage[] {
  const out: ModelMessage[] = [];
  if (systemPrompt) out.push(systemMessage(systemPrompt));
  for (const msg of history) {
    let messages = converted.get(msg);
    if (!messages) {
      messages = [];
      addModelMessages(messages, msg);
      converted.set(msg, messages);
    }
    for (const m of messages) out.push(m);
  }
  if (current) addModelMessages(out, current);
  return out;
}

/**
 * The model messages of each message of a history: a stored message never changes, so it is
 * converted once (the reply being run, which does change, is passed apart).
 */
const converted = new WeakMap<Msg, ModelMessage[]>();

/** Most system prompts whose model message is kept: an agent has one, a server a few agents. */
const SYSTEM_PROMPTS_KEPT = 64;
const systemMessages = new Map<string, ModelMessage>();

/** The system message of a prompt, the same object each time (its encoding is made once). */
function systemMessage(prompt: string): ModelMessage {
  let message = systemMessages.get(prompt);
  if (!message) {
    if (systemMessages.size >= SYSTEM_PROMPTS_KEPT) systemMessages.clear();
    message = { role: "system", content: prompt };
    systemMessages.set(prompt, message);
  }
  return message;
}

/** Adds the model messages of `msg` to `out`. */
function addModelMessages(out: ModelMessage[], msg: Msg): void {
  if (msg.role === "user" || msg.role === "system") {
    const text = msg.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
    out.push({ role: msg.role, content: text });
    return;
  }
  const results = new Map<string, ToolResultBlock>();
  for (const block of msg.content) {
    if (block.type === "tool_result") results.set(block.id, block);
  }
  let text = "";
  let calls: ModelToolCall[] = [];
  let pendingResults: { id: string; modelId: string }[] = [];
  const flush = () => {
    if (text === "" && calls.length === 0) return;
    out.push({ role: "assistant", content: text, toolCalls: calls });
    const answered = pendingResults.flatMap(({ id, modelId }): Answered[] => {
      const result = results.get(id);
      return result ? [{ result, modelId }] : [];
    });
    for (const { result, modelId } of answered) {
      out.push({ role: "tool", toolCallId: modelId, content: toolText(result) });
    }
    const images = toolImages(answered);
    if (images.length > 0) out.push({ role: "user", content: images });
    text = "";
    calls = [];
    pendingResults = [];
  };
  for (const block of msg.content) {
    switch (block.type) {
      case "text":
        if (calls.length > 0) flush();
        text += block.text;
        break;
      case "tool_call":
        // A question a running tool asked is the tool's business: the model sees its result.
        if (block.askedBy === undefined && results.has(block.id)) {
          const modelId = block.modelId ?? block.id;
          calls.push({ id: modelId, name: block.name, input: block.input });
          pendingResults.push({ id: block.id, modelId });
        }
        break;
      case "tool_result":
        // All calls of an iteration precede its first result: the iteration ends here.
        if (calls.length > 0) flush();
        break;
      case "thinking":
        break;
    }
  }
  flush();
}
