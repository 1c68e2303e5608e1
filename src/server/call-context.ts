import type { Metadata } from "@grpc/grpc-js";
import type { Logger } from "../common/logger.js";

/** What a handler knows about its call. */
export interface CallContext {
  /** Aborts when the client cancels, the deadline passes, or the server shuts down. */
  readonly signal: AbortSignal;
  /** The call's request metadata. */
  readonly metadata: Metadata;
  /** The client's address. */
  readonly peer: string;
  /** A logger bound to the method and peer. */
  readonly log: Logger;
  /** Who is calling: the tenant the call acts for, and the name of its token. */
  readonly principal: Principal;
  /**
   * The W3C `traceparent` of the call's server span (a child of the caller's), when tracing is on:
   * what the work the call starts (a reply) is traced under.
   */
  readonly traceparent: string | undefined;
  /**
   * Streaming calls: ends the call with `error` as its status as soon as possible, also while a
   * write waits for a client that stopped reading (the status then follows the messages already
   * written); the handler's generator is returned, so its `finally` blocks run. A unary handler
   * throws instead.
   */
  fail(error: Error): void;
  /** Says that the handler logged `error` itself: the call's end does not log it again. */
  reported(error: unknown): void;
}

/** An authenticated caller. */
export interface Principal {
  tenant: string;
  /** The token's name (or "anonymous" on a single-tenant server). */
  name: string;
}

/** Why a call was aborted by the server rather than the client. */
export class ServerShutdownError extends Error {
  override readonly name = "ServerShutdownError";
  constructor() {
    super("server shutting down");
  }
}
