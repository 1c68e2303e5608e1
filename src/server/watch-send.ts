import type { Metrics } from "../common/telemetry.js";
import type { SessionManager } from "../session/session-manager.js";
import type { AgentServiceHandlers } from "./agent-service.js";
import { applyUnary } from "./apply-sent.js";
import { AttachedEvents, attachCall, lazyStream, type OpenStreams } from "./attached-events.js";

/**
 * Watch and Send: Chat split in two for clients without bidi streams. Watch attaches as Chat's
 * attach does and streams the same events (it has no inputs, so no INPUT_ACK); Send applies one
 * input as a Chat input is applied, with the same request ids, checks, metrics and logs, and answers
 * with its acknowledgement — or fails with the status that acknowledgement would carry.
 *
 * The per-stream `inputsPerSecond` limit is Chat's own: a Send is a call of its own, not an input
 * on a stream, so it does not apply. Everything the session checks applies as for Chat: request
 * ids, the running-replies limit, the session's state and the tenant.
 */
export function watchSendHandlers(
  manager: SessionManager,
  metrics: Metrics,
  streams: OpenStreams,
): Pick<AgentServiceHandlers, "watch" | "send"> {
  return {
    watch(request, ctx) {
      const { sessionId, afterSeq } = request;
      return lazyStream(async () => {
        const attached = await attachCall(manager, ctx, streams, sessionId, afterSeq, "after_seq");
        return new AttachedEvents(attached, sessionId, streams);
      });
    },

    async send(request, ctx) {
      const applied = await applyUnary(manager, metrics, ctx, request);
      return { requestId: request.requestId, replyId: applied.replyId ?? "" };
    },
  };
}
