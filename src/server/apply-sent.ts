import { status as Status } from "@grpc/grpc-js";
import { invalidArgument } from "../common/errors.js";
import type { Metrics } from "../common/telemetry.js";
import type { Applied } from "../session/apply-input.js";
import type { SessionManager } from "../session/session-manager.js";
import type { CallContext } from "./call-context.js";
import { toRpcStatus } from "./errors.js";
import { logUnapplied, type SentInput } from "./input-log.js";
import { checkedRequest } from "./request-decoding.js";
import { toSessionInput } from "./session-inputs.js";

/** The gRPC status name an input's acknowledgement carries: "OK", or its refusal's. */
export function ackCode(err?: unknown): string {
  if (err === undefined) return "OK";
  const code = toRpcStatus(err).code;
  return Status[code] ?? String(code);
}

/**
 * Applies one input a client sent (over Chat, Reply or Send) for the caller: after `check` (the
 * transport's own checks, e.g. a stream's rate), decoded (`field` names the input in a field
 * violation), applied with the caller's principal, request id and trace. Every outcome is counted
 * in the acknowledgements metric; a refusal is logged (see `logUnapplied`) and thrown.
 */
export async function applySent(
  manager: SessionManager,
  metrics: Metrics,
  ctx: CallContext,
  sent: SentInput,
  field: string,
  check?: () => void,
): Promise<Applied> {
  try {
    check?.();
    const applied = await manager.apply(
      ctx.principal.tenant,
      sent.sessionId,
      toSessionInput(sent.input, field),
      { principal: ctx.principal.name, requestId: sent.requestId, trace: ctx.traceparent },
    );
    metrics.inputAcked("OK");
    return applied;
  } catch (err) {
    logUnapplied(ctx, sent, err);
    metrics.inputAcked(ackCode(err));
    throw err;
  }
}

/**
 * `applySent` for a unary call carrying one input (Reply, Send): a request decoded with a refusal
 * is refused here (see `checkedUnaryRequest`), `session_id` is required, and a refusal, logged with
 * the input's fields, is not logged again when the call ends.
 */
export async function applyUnary(
  manager: SessionManager,
  metrics: Metrics,
  ctx: CallContext,
  sent: SentInput,
): Promise<Applied> {
  try {
    return await applySent(manager, metrics, ctx, sent, "input", () => {
      checkedRequest(sent);
      if (!sent.sessionId) {
        throw invalidArgument([{ field: "session_id", description: "is required" }]);
      }
    });
  } catch (err) {
    ctx.reported(err);
    throw err;
  }
}
