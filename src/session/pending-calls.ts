import type { Msg, ToolCallBlock } from "../agent/types.js";

/** The calls of a reply that await an answer: asking (a confirmation) or submitted (a result). */
export function pendingCalls(message: Msg | undefined): ToolCallBlock[] {
  return (message?.content ?? []).filter(
    (b): b is ToolCallBlock =>
      b.type === "tool_call" && (b.state === "asking" || b.state === "submitted"),
  );
}

/**
 * The run an answer to the calls `ids` waits for: `run`, while the reply runs on from another
 * answer to the same park and each of them still awaits an answer in `message` (two people
 * answering two calls at once), since the run parks again with them. Undefined when one of them is
 * a question a running tool asked (the run waits for that answer) or no longer awaits one (the
 * usual checks then say why).
 */
export function awaitedRun(
  run: Promise<void> | undefined,
  message: Msg | undefined,
  ids: readonly string[],
): Promise<void> | undefined {
  if (!run || ids.length === 0) return undefined;
  const waiting = new Map(pendingCalls(message).map((call) => [call.id, call]));
  const parksAgain = ids.every((id) => waiting.has(id) && waiting.get(id)?.askedBy === undefined);
  return parksAgain ? run.catch(() => undefined) : undefined;
}
