import { type Metadata, status as Status } from "@grpc/grpc-js";
import { isParkwayError, ParkwayError } from "../common/errors.js";
import type { Logger } from "../common/logger.js";
import type { TraceSpan, Tracing } from "../common/telemetry.js";
import type { Authenticate } from "./auth.js";
import { type CallContext, type Principal, ServerShutdownError } from "./call-context.js";
import { CallFailure } from "./call-failure.js";
import { isUnexpected } from "./errors.js";

/** What the adapters of every port share: the logger, admission, auth and the shutdown signal. */
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
export function endSpan(span: TraceSpan | undefined, code: number): void {
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
export class Context implements CallContext {
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

  /** The client went away or gave up: the handler's signal aborts with `reason`. */
  cancel(reason: Error): void {
    this.controller.abort(reason);
  }

  /** True when the call was aborted because the server shuts down. */
  get shuttingDown(): boolean {
    return this.signal.reason instanceof ServerShutdownError;
  }

  /** Forgets the call once it has ended. */
  dispose(): void {
    this.calls.delete(this.controller);
  }
}

/**
 * Opens a call: admission (UNAVAILABLE while starting or draining), then auth (UNAUTHENTICATED);
 * either throws before any handler runs. The context's signal aborts when the server shuts down.
 */
export function openCall(
  env: AdapterEnv,
  method: string,
  metadata: Metadata,
  peer: string,
): Context {
  env.admit();
  const controller = new AbortController();
  const calls = callControllers(env);
  if (env.shutdown.aborted) controller.abort(env.shutdown.reason);
  else calls.add(controller);
  let principal: Principal;
  try {
    principal = env.authenticate(metadata);
  } catch (err) {
    calls.delete(controller);
    throw err;
  }
  return new Context(env, method, calls, controller, metadata, peer, principal);
}

/** Logs a call's failure once: unexpected errors as errors, refusals at debug. */
export function report(ctx: Context, err: unknown): void {
  if (err === ctx.logged) return;
  if (isUnexpected(err)) ctx.log.error({ err }, "handler failed");
  else ctx.log.debug({ err }, "handler refused the call");
}

/** Counts `work` among the calls in flight until it settles. */
export function track(env: AdapterEnv, work: Promise<unknown>): void {
  env.inFlight.add(work);
  void work.finally(() => env.inFlight.delete(work));
}

/**
 * What a unary call that failed answers: the handler's error, or UNAVAILABLE "server shutting down"
 * when the shutdown aborted it (an UNAVAILABLE of the handler's own, a storage failure, says more).
 */
export function unaryFailure(ctx: Context, err: unknown): unknown {
  return ctx.shuttingDown && !isParkwayError(err, "unavailable")
    ? new ParkwayError("unavailable", "server shutting down")
    : err;
}
