import type { Msg, ToolCallBlock } from "../agent/types.js";

/** The calls of a reply that await an answer: asking (a confirmation) or submitted (a result). */
export function pendingCalls(message: Msg | undefined): ToolCallBlock[] {
  return (message?.content ?? []).filter(
    (b): b is ToolCallBlock =>
      b.type === "tool_call" && (b.state === "asking" || b.state === "submitted"),
  );
}
