import { type ChatMessage, type ChatRequest, messageText } from "./chat-request.js";
import type { Script, TurnMatch } from "./script.js";

/**
 * Picks the turn that answers a request: the first turn whose `match` holds, else the first turn
 * without `match` that is still playable; `undefined` when none is left. A turn is playable when it
 * has not been played yet or is marked `repeat`.
 */
export function selectTurn(
  script: Script,
  played: ReadonlySet<number>,
  request: ChatRequest,
): number | undefined {
  const playable = (index: number, repeat: boolean | undefined) =>
    repeat === true || !played.has(index);
  const matched = script.turns.findIndex(
    (turn, index) =>
      turn.match !== undefined &&
      playable(index, turn.repeat) &&
      matches(turn.match, request.messages),
  );
  if (matched >= 0) return matched;
  const next = script.turns.findIndex(
    (turn, index) => turn.match === undefined && playable(index, turn.repeat),
  );
  return next >= 0 ? next : undefined;
}

/** True when every condition of `match` holds for the last message; an empty match always holds. */
function matches(match: TurnMatch, messages: readonly ChatMessage[]): boolean {
  const last = messages.at(-1);
  if (match.lastUser !== undefined) {
    if (last?.role !== "user" || !new RegExp(match.lastUser).test(messageText(last))) return false;
  }
  if (match.lastToolResult !== undefined) {
    if (last?.role !== "tool" || !new RegExp(match.lastToolResult).test(messageText(last))) {
      return false;
    }
  }
  if (match.toolName !== undefined) {
    if (last?.role !== "tool" || toolNameOf(last, messages) !== match.toolName) return false;
  }
  return true;
}

/** The name of the tool a tool message answers, from the assistant message that made the call. */
function toolNameOf(result: ChatMessage, messages: readonly ChatMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const call = messages[i]?.tool_calls?.find((c) => c.id === result.tool_call_id);
    if (call) return call.function.name;
  }
  return undefined;
}
