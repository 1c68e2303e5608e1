import type { Msg, ToolCallBlock, Usage } from "../agent/types.js";
import { addUsage } from "../agent/usage.js";
import { pendingCalls } from "./pending-calls.js";
import type { SessionData } from "./records.js";

/** A session as the API shows it. */
export interface SessionView extends SessionData {
  /** The calls of its parked reply awaiting an answer. */
  pendingToolCalls: ToolCallBlock[];
  /** Its finished replies' usage plus its running or parked reply's so far. */
  usage: Usage;
}

/**
 * The view of a session record and its active (running or parked) reply's message. The record
 * holds only finished replies' usage (each added in the write that ends it), so the active one's
 * is added here, without counting any reply twice.
 */
export function sessionView(data: SessionData, active: Msg | undefined): SessionView {
  return {
    ...data,
    pendingToolCalls: pendingCalls(active),
    usage: addUsage(data.usage, active?.usage),
  };
}
