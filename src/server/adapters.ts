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
import { isParkwayError, ParkwayError } from "../common/errors.js";
import type { Logger } from "../common/logger.js";
import type { TraceSpan, Tracing } from "../common/telemetry.js";
import type { Authenticate } from "./auth.js";
import { type CallContext, type Principal, ServerShutdownError } from "./call-context.js";
import { isUnexpected, toStatusObject } from "./errors.js";
import { CallFailure } from "./call-failure.js";
import { readMessages } from "./read-messages.js";

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

/** What the adapters share: the logger and the server-wide shutdown signal. */
export interface AdapterEnv {
  readonly log: Logger;
  /** Aborts with `ServerShutdownError` when the server drains. */
  readonly shutdown: AbortSignal;
  /** Counts calls in flight so shutdown can wait for them. */
  readonly inFlight: Set<Promise<unknown>>;
  /** Who a call acts for; throws UNAUTHENTICATED before the handler runs. */
  readonly authenticate: Authenticate;
  /**
   * Throws (UNAVAILABLE) while the server does not take calls: it is starting or shutting down.
   * Checked before the handler runs.
   */
  readonly admit: () => void;
  /** Server spans of the calls (RPC semantic conventions), children of the caller's `traceparent`. */
  readonly tracing?: Tracing;
  /** The full name of the service the methods belong to, e.g. "parkway.v1.AgentService". */
  readonly service?: string;
}

/** The caller's W3C `traceparent` (gRPC metadata key "traceparent"), if it sent one. */
function callerTrace(metadata: Metadata): string | undefined {
  const value = metadata.get("traceparent")[0];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The call's server span, when tracing is on. */
function serverSpan(env: AdapterEnv, method: string, metadata: Metadata, peer: string) {
  if (!env.tracing?.enabled) return undefined;
  const service = env.service ?? "parkway.v1";
  return env.tracing.start(`${service}/${method}`, {
    parent: callerTrace(metadata),
    kind: "server",
    attributes: {
      "rpc.system": "grpc",
      "rpc.service": service,
      "rpc.method": method,
      "network.peer.address": peer.replace(/:\d+$/, ""),
    },
  });
}

/** Ends a server span with the call's gRPC status code (0 = OK). */
function endSpan(span: TraceSpan | undefined, code: number): void {
  if (!span) return;
  span.setAttributes({ "rpc.grpc.status_code": code });
  span.end(code === 0 ? {} : { error: String(Status[code] ?? code) });
}

const callsOf = new WeakMap<AdapterEnv, Set<AbortController>>();

/**
 * The controllers of the calls in flight, aborted together by one listener on the shutdown signal
 * (a listener per call would make attaching N streams cost O(N²): EventTarget scans its listeners).
 */
function callControllers(env: AdapterEnv): Set<AbortController> {
  let calls = callsOf.get(env);
  if (!calls) {
    const set = new Set<AbortController>();
    env.shutdown.addEventListener(
      "abort",
      () => {
        for (const controller of set) controller.abort(env.shutdown.reason);
      },
      { once: true },
    );
    callsOf.set(env, set);
    calls = set;
  }
  return calls;
}

/** A call's context: one per call, so a class (its methods are shared, not closures per call). */
class Context implements CallContext {
  readonly failure = new CallFailure();
  readonly signal: AbortSignal;
  private logger: Logger | undefined;
  /** The call's server span, when tracing is on. */
  readonly span: TraceSpan | undefined;
  /** The error the handler logged itself (see `reported`): the adapter does not log it again. */
  logged: unknown = undefined;

  constructor(
    private readonly env: AdapterEnv,
    private readonly method: string,
    private readonly calls: Set<AbortController>,
    private readonly controller: AbortController,
    readonly metadata: Metadata,
    readonly peer: string,
    readonly principal: Principal,
  ) {
    this.signal = controller.signal;
    this.span = serverSpan(env, method, metadata, peer);
  }

  get traceparent(): string | undefined {
    return this.span?.traceparent;
  }

  /**
   * Made on first use: most calls never log, and an idle stream should not hold a logger. Bound to
   * the method, the peer, the tenant (unless the default) and, when the call is traced, its trace.
   */
  get log(): Logger {
    if (this.logger) return this.logger;
    const bindings: Record<string, unknown> = { method: this.method, peer: this.peer };
    if (this.principal.tenant !== "default") bindings.tenant = this.principal.tenant;
    const traceId = this.span?.traceId;
    if (traceId) bindings.trace_id = traceId;
    this.logger = this.env.log.child(bindings);
    return this.logger;
  }

  reported(err: unknown): void {
    this.logged = err;
  }

  fail(error: Error): void {
    this.failure.fail(error);
  }

  /** Forgets the call once it has ended. */
  dispose(): void {
    this.calls.delete(this.controller);
  }
}

function createContext(
  call: { metadata: Metadata; getPeer(): string; on(event: "cancelled", fn: () => void): unknown },
  method: string,
  env: AdapterEnv,
): Context {
  env.admit();
  const controller = new AbortController();
  const calls = callControllers(env);
  if (env.shutdown.aborted) controller.abort(env.shutdown.reason);
  else calls.add(controller);
  call.on("cancelled", () => controller.abort(new Error("cancelled by client")));
  let principal: Principal;
  try {
    principal = env.authenticate(call.metadata);
  } catch (err) {
    calls.delete(controller);
    throw err;
  }
  return new Context(env, method, calls, controller, call.metadata, call.getPeer(), principal);
}

function report(ctx: Context, err: unknown): void {
  if (err === ctx.logged) return;
  if (isUnexpected(err)) ctx.log.error({ err }, "handler failed");
  else ctx.log.debug({ err }, "handler refused the call");
}

function track(env: AdapterEnv, work: Promise<unknown>): void {
  env.inFlight.add(work);
  void work.finally(() => env.inFlight.delete(work));
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
        const response = await handler(call.request, ctx);
        callback(null, response);
        endSpan(ctx.span, 0);
      } catch (err) {
        report(ctx, err);
        // An UNAVAILABLE of the handler's own (a storage failure) says more than the shutdown.
        const shutdown =
          ctx.signal.reason instanceof ServerShutdownError && !isParkwayError(err, "unavailable");
        const status = toStatusObject(
          shutdown ? new ParkwayError("unavailable", "server shutting down") : err,
        );
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
  const work = (async () => {
    try {
      for (;;) {
        const next = await responses.next();
        if (next.done) break;
        for (const message of next.value) {
          failure.throwIfFailed();
          if (!call.write(message)) await failure.drained(call, ctx.signal);
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
    pipeResponses(call, ctx, env, handler(call.request, ctx)[Symbol.asyncIterator]());
  };
}
