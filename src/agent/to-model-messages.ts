import type { ModelMessage, ModelToolCall } from "../model/model.js";
import type { Msg } from "./types.js";

/**
 * Turns the conversation into the model's messages. An assistant message becomes one model message
 * per iteration (its text and tool calls) followed by one tool message per result. A tool call
 * without a result (a reply cut short by an error) and a result without its call are left out, so
 * the history the model sees is always well-formed. A call and its result carry the model's own id
 * for the call when it gave one (the server's id otherwise), so each turn reads back as the model
 * wrote it, even when the model reuses its ids from turn to turn.
 */
export function toModelMessages(systemPrompt: string, messages: readonly Msg[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  if (systemPrompt) out.push({ role: "system", content: systemPrompt });
  for (const msg of messages) {
    if (msg.role === "user" || msg.role === "system") {
      const text = msg.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
      out.push({ role: msg.role, content: text });
      continue;
    }
    const results = new Map<string, string>();
    for (const block of msg.content) {
      if (block.type === "tool_result") results.set(block.id, block.output);
    }
    let text = "";
    let calls: ModelToolCall[] = [];
    let pendingResults: { id: string; modelId: string }[] = [];
    const flush = () => {
      if (text === "" && calls.length === 0) return;
      out.push({ role: "assistant", content: text, toolCalls: calls });
      for (const { id, modelId } of pendingResults) {
        out.push({ role: "tool", toolCallId: modelId, content: results.get(id) ?? "" });
      }
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
          if (results.has(block.id)) {
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
  return out;
}
