import type { Msg, ToolCallBlock } from "./types.js";

/*
 * Copies of a message or a call, for code that changes it later or keeps what it was. What changes
 * is a message's content list and its blocks' own fields (a call's state, input, deadline, ...);
 * what a block holds (a decision, rules, result data) is replaced when it changes, never changed in
 * place, so a copy shares it. A deep copy (structuredClone) costs several times as much.
 */

/** What a call is now, for an event that announces it. */
export function callSnapshot(call: ToolCallBlock): ToolCallBlock {
  return { ...call };
}

/** A message to change apart from `message`: its own content list and blocks. */
export function messageCopy(message: Msg): Msg {
  return { ...message, content: message.content.map((block) => ({ ...block })) };
}
