import {
  type handleBidiStreamingCall,
  type handleServerStreamingCall,
  type handleUnaryCall,
  type Metadata,
  type ServerDuplexStream,
  type ServerWritableStream,
  type ServerUnaryCall,
  status as Status,
} from "@grpc/grpc-js";
import { type CallContext, ServerShutdownError } from "./call-context.js";
import {
  type AdapterEnv,
  type Context,
  endSpan,
  openCall,
  report,
  track,
  unaryFailure,
} from "./call-lifecycle.js";
import { toStatusObject } from "./errors.js";
import { readMessages } from "./read-messages.js";
import { checkedUnaryRequest, requestRefusal } from "./request-decoding.js";
import { sendQueuedTogether } from "./batched-writes.js";

export type { AdapterEnv } from "./call-lifecycle.js";

/** A unary handler: a plain async function. */
export type UnaryHandler<Req, Res> = (request: Req, ctx: CallContext) => Promise<Res>;

/**
 * A bidi handler: reads the request messages, yields the responses in batches (whatever is ready
 * at once, so a burst costs one step of the iterator, not one per message).
 */
export type BidiHandler<Req, Res> = (
  requests: AsyncIterable<Req>,
  ctx: CallContext,
) => AsyncIterable<readonly Res[]>;

/**
 * A server-streaming handler: takes the request, yields the responses in batches (as a bidi
 * handler does).
 */
export type ServerStreamHandler<Req, Res> = (
  request: Req,
  ctx: CallContext,
) => AsyncIterable<readonly Res[]>;

function createContext(
  call: { metadata: Metadata; getPeer(): string; on(event: "cancelled", fn: () => void): unknown },
  method: string,
  env: AdapterEnv,
): Context {
  const ctx = openCall(env, method, call.metadata, call.getPeer());
  call.on("cancelled", () => ctx.cancel(new Error("cancelled by client")));
  return ctx;
}

/**
 * Adapts a plain async function to grpc-js: every rejection becomes a status through the one error
 * mapping (unknown errors are logged and answered with a generic INTERNAL).
 */
export function adaptUnary<Req, Res>(
  method: string,
  handler: UnaryHandler<Req, Res>,
  env: AdapterEnv,
): handleUnaryCall<Req, Res> {
  return (call: ServerUnaryCall<Req, Res>, callback) => {
    let ctx: Context;
    try {
      ctx = createContext(call, method, env);
    } catch (err) {
      callback(toStatusObject(err));
      return;
    }
    const work = (async () => {
      try {
        const response = await handler(checkedUnaryRequest(method, call.request), ctx);
        callback(null, response);
        endSpan(ctx.span, 0);
      } catch (err) {
        report(ctx, err);
        const status = toStatusObject(unaryFailure(ctx, err));
        callback(status);
        endSpan(ctx.span, status.code);
      } finally {
        ctx.dispose();
      }
    })();
    track(env, work);
  };
}

/** A call that the server writes a stream of messages to (server-streaming or bidi). */
type WritableCall<Res> = ServerWritableStream<unknown, Res> | ServerDuplexStream<unknown, Res>;

/**
 * Writes a streaming handler's responses to its call (see `adaptBidi`) and ends the call with its
 * status; tracked so that shutdown waits for it.
 */
function pipeResponses<Res>(
  call: WritableCall<Res>,
  ctx: Context,
  env: AdapterEnv,
  responses: AsyncIterator<readonly Res[]>,
): void {
  const failure = ctx.failure;
  let code: number = Status.OK;
  sendQueuedTogether(call);
  const work = (async () => {
    try {
      for (;;) {
        const next = await responses.next();
        if (next.done) break;
        // Corked, a batch goes to the transport in one write (see `sendQueuedTogether`), as far
        // as the call takes it before it is full.
        let corked = false;
        try {
          for (const message of next.value) {
            failure.throwIfFailed();
            if (!corked && next.value.length > 1) {
              call.cork();
              corked = true;
            }
            if (!call.write(message)) {
              call.uncork();
              corked = false;
              await failure.drained(call, ctx.signal);
            }
          }
        } finally {
          if (corked) call.uncork();
        }
      }
      failure.throwIfFailed();
      if (ctx.signal.reason instanceof ServerShutdownError) throw ctx.signal.reason;
      if (!ctx.signal.aborted) call.end();
    } catch (err) {
      if (ctx.signal.aborted) {
        code = Status.CANCELLED;
        if (ctx.signal.reason instanceof ServerShutdownError) {
          code = Status.UNAVAILABLE;
          call.emit("error", { code, details: "server shutting down" });
        }
        // A client cancel needs no status: the call is already gone.
      } else {
        report(ctx, err);
        const status = toStatusObject(err);
        code = status.code;
        call.emit("error", status);
      }
    } finally {
      await responses.return?.().catch(() => undefined);
      ctx.dispose();
      endSpan(ctx.span, code);
    }
  })();
  track(env, work);
}

/**
 * Adapts an async generator to a grpc-js bidi call: writes respect backpressure — while `write()`
 * says the transport is full, nothing more is asked of the generator until `drain` (grpc-js then
 * holds at most its high-water mark); a client cancel or the server's shutdown aborts `ctx.signal`,
 * and the generator must then finish (its `finally` blocks run); a shutdown ends the call with
 * UNAVAILABLE; a thrown error, or one given to `ctx.fail`, becomes the call's status (sent after the
 * messages already written, when the client reads them).
 */
export function adaptBidi<Req, Res>(
  method: string,
  handler: BidiHandler<Req, Res>,
  env: AdapterEnv,
): handleBidiStreamingCall<Req, Res> {
  return (call: ServerDuplexStream<Req, Res>) => {
    let ctx: Context;
    try {
      ctx = createContext(call, method, env);
    } catch (err) {
      call.emit("error", toStatusObject(err));
      return;
    }
    const responses = handler(readMessages<Req>(call, ctx.signal), ctx)[Symbol.asyncIterator]();
    pipeResponses(call, ctx, env, responses);
  };
}

/**
 * The responses of a server-streaming handler to `request`; a request refused as it was decoded
 * (see `withSafeDecoding`) fails at once, without the handler.
 */
export function serverStream<Req, Res>(
  handler: ServerStreamHandler<Req, Res>,
  request: Req,
  ctx: CallContext,
): AsyncIterator<readonly Res[]> {
  const refusal = requestRefusal(request);
  if (refusal) {
    return {
      next: () => Promise.reject(refusal),
      return: () => Promise.resolve({ done: true, value: undefined }),
    };
  }
  return handler(request, ctx)[Symbol.asyncIterator]();
}

/**
 * Adapts an async generator to a grpc-js server-streaming call, as `adaptBidi` does (backpressure,
 * cancel, shutdown → UNAVAILABLE, the call's span), the generator taking the one request.
 */
export function adaptServerStream<Req, Res>(
  method: string,
  handler: ServerStreamHandler<Req, Res>,
  env: AdapterEnv,
): handleServerStreamingCall<Req, Res> {
  return (call: ServerWritableStream<Req, Res>) => {
    let ctx: Context;
    try {
      ctx = createContext(call, method, env);
    } catch (err) {
      call.emit("error", toStatusObject(err));
      return;
    }
    pipeResponses(call, ctx, env, serverStream(handler, call.request, ctx));
  };
}
