import { status as Status } from "@grpc/grpc-js";
import { isParkwayError } from "../common/errors.js";
import type { ReplyRequest } from "../generated/parkway/v1/agent_service.js";
import type { ClientEvent } from "../generated/parkway/v1/events.js";
import type { CallContext } from "./call-context.js";
import { isUnexpected, toRpcStatus } from "./errors.js";

type Input = NonNullable<ClientEvent["event"]> | NonNullable<ReplyRequest["input"]>;

/** An input's kind as the proto names it (user_message, user_confirm_result, …). */
const KINDS: Record<Input["$case"], string> = {
  attach: "attach",
  userMessage: "user_message",
  userInterrupt: "user_interrupt",
  userConfirmResult: "user_confirm_result",
  externalExecutionResult: "external_execution_result",
};

/** An input a client sent over Chat, Reply or Send. */
export interface SentInput {
  sessionId: string;
  requestId: string;
  input: Input | undefined;
}

/**
 * Logs, once, an input the server did not apply. A refusal (a domain error: INVALID_ARGUMENT,
 * FAILED_PRECONDITION, RESOURCE_EXHAUSTED, …) is logged at info with what an operator needs to see
 * why: the session, the reply the input named, the request id, the input's kind, the gRPC code,
 * the message, and the violations and reason the client got. Anything else is a bug: logged at
 * error, with the same fields and the error itself.
 */
export function logUnapplied(ctx: CallContext, sent: SentInput, err: unknown): void {
  const { input } = sent;
  const replyId = input && "replyId" in input.value ? input.value.replyId : "";
  const fields = {
    session: sent.sessionId,
    ...(replyId ? { reply: replyId } : {}),
    ...(sent.requestId ? { requestId: sent.requestId } : {}),
    input: input ? KINDS[input.$case] : "none",
  };
  if (isUnexpected(err) || !isParkwayError(err)) {
    ctx.log.error({ err, ...fields }, "input failed");
    return;
  }
  const { fieldViolations, preconditionViolations, reason } = err.details;
  const code = toRpcStatus(err).code;
  ctx.log.info(
    {
      ...fields,
      code: Status[code] ?? String(code),
      error: err.message,
      ...(fieldViolations?.length ? { fieldViolations } : {}),
      ...(preconditionViolations?.length ? { preconditionViolations } : {}),
      ...(reason ? { reason } : {}),
    },
    "input refused",
  );
}
