import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { status as Status } from "@grpc/grpc-js";
import { type ServerStreamHandler, serverStream, type UnaryHandler } from "../adapters.js";
import { checkedUnaryRequest } from "../request-decoding.js";
import {
  type AdapterEnv,
  type Context,
  endSpan,
  report,
  track,
  unaryFailure,
} from "../call-lifecycle.js";
import { toConnectError, shuttingDownError } from "./connect-errors.js";
import { openWebCall } from "./web-call.js";

/** Converts a method's messages between the web port's (protobuf-es) and the handlers' (ts-proto). */
export interface MessageCodec<WebReq, WebRes, Req, Res> {
  request(message: WebReq): Req;
  response(message: Res): WebRes;
}

function open(env: AdapterEnv, method: string, hctx: HandlerContext): Context {
  try {
    return openWebCall(env, method, hctx);
  } catch (err) {
    throw toConnectError(err);
  }
}

/**
 * Serves a unary handler on the web port: the same admission, auth, span, log, in-flight tracking
 * and error mapping as `adaptUnary` on the gRPC port.
 */
export function webUnary<WebReq, WebRes, Req, Res>(
  method: string,
  handler: UnaryHandler<Req, Res>,
  env: AdapterEnv,
  codec: MessageCodec<WebReq, WebRes, Req, Res>,
): (request: WebReq, hctx: HandlerContext) => Promise<WebRes> {
  return (request, hctx) => {
    const ctx = open(env, method, hctx);
    const work = (async () => {
      try {
        const decoded = checkedUnaryRequest(method, codec.request(request));
        const response = codec.response(await handler(decoded, ctx));
        endSpan(ctx.span, 0);
        return response;
      } catch (err) {
        report(ctx, err);
        const error = toConnectError(unaryFailure(ctx, err));
        endSpan(ctx.span, error.code);
        throw error;
      } finally {
        ctx.dispose();
      }
    })();
    track(
      env,
      work.catch(() => undefined),
    );
    return work;
  };
}

/**
 * Serves a server-streaming handler on the web port as `adaptServerStream` does on the gRPC port:
 * the next batch is asked of the handler only once the previous messages are written; a client
 * cancel or the server's shutdown aborts `ctx.signal` and the handler's generator is returned; a
 * shutdown ends the call with UNAVAILABLE; a thrown error, or one given to `ctx.fail`, becomes the
 * call's status after the messages already written.
 */
export function webServerStream<WebReq, WebRes, Req, Res>(
  method: string,
  handler: ServerStreamHandler<Req, Res>,
  env: AdapterEnv,
  codec: MessageCodec<WebReq, WebRes, Req, Res>,
): (request: WebReq, hctx: HandlerContext) => AsyncGenerator<WebRes> {
  return async function* (request, hctx) {
    const ctx = open(env, method, hctx);
    let finished!: () => void;
    track(env, new Promise<void>((resolve) => (finished = resolve)));
    // A client that goes away while a message is written leaves the generator at its `yield`.
    let code: number = Status.CANCELLED;
    let responses: AsyncIterator<readonly Res[]> | undefined;
    try {
      responses = serverStream(handler, codec.request(request), ctx);
      for (;;) {
        const next = await responses.next();
        if (next.done) break;
        for (const message of next.value) {
          ctx.failure.throwIfFailed();
          yield codec.response(message);
        }
      }
      ctx.failure.throwIfFailed();
      if (ctx.shuttingDown) throw ctx.signal.reason;
      code = Status.OK;
    } catch (err) {
      if (ctx.signal.aborted) {
        code = ctx.shuttingDown ? Status.UNAVAILABLE : Status.CANCELLED;
        throw ctx.shuttingDown
          ? shuttingDownError()
          : new ConnectError("cancelled by client", Code.Canceled);
      }
      report(ctx, err);
      const error = toConnectError(err);
      code = error.code;
      throw error;
    } finally {
      await responses?.return?.().catch(() => undefined);
      ctx.dispose();
      endSpan(ctx.span, code);
      finished();
    }
  };
}
