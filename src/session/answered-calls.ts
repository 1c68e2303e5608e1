import type { Msg, ToolCallBlock, ToolResultBlock } from "../agent/types.js";
import { failedPrecondition, invalidArgument, ParkwayError } from "../common/errors.js";

/** How a finished call ended, by its result's state. */
const OUTCOMES: Record<ToolResultBlock["state"], string> = {
  success: "it ran",
  error: "it failed",
  interrupted: "interrupted",
  denied: "denied",
  running: "still running",
};

const describeState = (call: ToolCallBlock): string =>
  call.state === "asking"
    ? "awaiting confirmation"
    : call.state === "submitted"
      ? "awaiting an external result"
      : call.state === "finished"
        ? "already finished"
        : call.state;

/**
 * Finds the calls an answer names, refusing the whole input when one is unknown (NOT_FOUND), not in
 * the state this kind of answer needs (FAILED_PRECONDITION with its state), or named twice.
 */
export function findCalls(
  message: Msg,
  ids: string[],
  wanted: "asking" | "submitted",
  field: string,
): ToolCallBlock[] {
  if (ids.length === 0) throw invalidArgument([{ field, description: "answers no tool call" }]);
  const seen = new Set<string>();
  return ids.map((id, i) => {
    if (!id)
      throw invalidArgument([{ field: `${field}[${i}]`, description: "names no tool call id" }]);
    if (seen.has(id)) {
      throw invalidArgument([{ field: `${field}[${i}]`, description: `answers ${id} twice` }]);
    }
    seen.add(id);
    const call = message.content.find(
      (b): b is ToolCallBlock => b.type === "tool_call" && b.id === id,
    );
    if (!call) {
      throw new ParkwayError("not_found", `tool call ${id} is not part of reply ${message.id}`, {
        reason: "TOOL_CALL_NOT_FOUND",
        metadata: { tool_call_id: id },
      });
    }
    if (call.state !== wanted) {
      const result = message.content.find(
        (b): b is ToolResultBlock => b.type === "tool_result" && b.id === id,
      );
      const outcome = call.state === "finished" && result ? ` (${OUTCOMES[result.state]})` : "";
      throw failedPrecondition(
        `tool call ${id} (${call.name}) is ${describeState(call)}${outcome}, not ${wanted === "asking" ? "awaiting confirmation" : "awaiting an external result"}`,
        [{ type: "TOOL_CALL_STATE", subject: id, description: describeState(call) }],
      );
    }
    return call;
  });
}
