import { invalidArgument } from "../common/errors.js";
import type { SessionManager } from "../session/session-manager.js";
import type { AgentServiceHandlers } from "./agent-service.js";
import { msgToPb } from "./mappers/content.js";
import { messagesThatFit } from "./response-size.js";

/**
 * ListMessages: a session's messages newest first (see `SessionManager.messages`), `page_size` at a
 * time (1–1000, 0 meaning 100), a page ending early where the next message would pass
 * `MAX_LIST_PAGE_BYTES`. Another tenant's session is NOT_FOUND.
 */
export function listMessagesHandler(manager: SessionManager): AgentServiceHandlers["listMessages"] {
  return async (request, ctx) => {
    if (request.pageSize > 1000) {
      throw invalidArgument([{ field: "page_size", description: "must be at most 1000" }]);
    }
    const page = await manager.messages(ctx.principal.tenant, request.sessionId, {
      pageSize: request.pageSize || 100,
      ...(request.pageToken ? { pageToken: request.pageToken } : {}),
    });
    const messages = page.messages.map((m) => msgToPb(m.message));
    const fit = messagesThatFit(messages);
    return fit < messages.length
      ? { messages: messages.slice(0, fit), nextPageToken: String(page.messages[fit - 1]!.index) }
      : { messages, nextPageToken: page.nextPageToken ?? "" };
  };
}
