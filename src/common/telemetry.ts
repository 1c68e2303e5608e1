/**
 * What Parkway reports about itself, as the layers that report it see it: a few named measurements
 * (`Metrics`) and spans (`Tracing`). `src/telemetry` implements both with prom-client and the
 * OpenTelemetry SDK; every other layer receives these interfaces and imports no exporter. The
 * defaults (`noTelemetry`) do nothing and cost nothing.
 */

/** Values of a span's attributes (OpenTelemetry's primitive attribute values). */
export type SpanAttributes = Record<string, string | number | boolean | string[] | undefined>;

/** A span being recorded. */
export interface TraceSpan {
  /** This span's W3C `traceparent`, what its children and outgoing calls carry; undefined when off. */
  readonly traceparent: string | undefined;
  /** Its trace id (32 hex digits); undefined when tracing is off. */
  readonly traceId: string | undefined;
  setAttributes(attributes: SpanAttributes): void;
  /** Ends it, as failed when `error` is given; `at` (epoch ms) ends it at another time than now. */
  end(options?: { error?: string; at?: number }): void;
}

/** How a span starts. */
export interface SpanOptions {
  /** The parent's W3C `traceparent`; none starts a new trace. */
  parent?: string | undefined;
  kind?: "server" | "client" | "internal";
  /** When it started (epoch ms), if not now. */
  at?: number;
  attributes?: SpanAttributes;
  /** Spans (their `traceparent`) this one is linked to without being their child. */
  links?: readonly string[];
  /** The `traceparent` that `Tracing.reserve` gave: the span takes its trace and span ids. */
  reserved?: string | undefined;
}

/** Starts spans; `enabled` is false when no exporter is configured. */
export interface Tracing {
  readonly enabled: boolean;
  start(name: string, options?: SpanOptions): TraceSpan;
  /**
   * The `traceparent` of a span not started yet (a child of `parent`, or the root of a new trace):
   * what can be stored now, while the span itself is started later with it (`reserved`), off the
   * path of the write that stores it. Undefined when tracing is off.
   */
  reserve(parent?: string): string | undefined;
}

/** What a parked call waited for: a person's confirmation, an external tool's result, an answer. */
export type ParkKind = "confirm" | "external" | "ask_user";

/** What an external policy decision point answered, or how asking it failed. */
export type PolicyDecisionResult = "allow" | "ask" | "deny" | "error" | "timeout";

/** The store operations that are timed. */
export type StoreOperation = "get" | "get_many" | "write" | "write_synced" | "scan";

/** What became of a park notification's attempt. */
export type NotificationResult = "delivered" | "failed" | "dead" | "superseded";

/** Token counts of one model call. */
export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** Gauges read when metrics are collected. */
export interface GaugeSources {
  /** Chat and Watch streams (and attaches) open on this node. */
  streams(): number;
  /** Session actors in memory on this node. */
  sessionActors(): number;
  /** Parked replies by agent, as stored (the same on every node). */
  parkedReplies(): Promise<ReadonlyMap<string, number>>;
}

/** The measurements Parkway takes; every method is cheap and never throws. */
export interface Metrics {
  readonly enabled: boolean;
  /** A reply ended with `outcome` (its finished reason). */
  replyEnded(agent: string, outcome: string, tenant: string): void;
  /** A parked call of `kind` was answered `seconds` after the reply parked. */
  parkAnswered(kind: ParkKind, seconds: number): void;
  /** A model call took `seconds`; its first token came after `firstTokenSeconds`, if any came. */
  modelCall(
    call: { agent: string; model: string; tenant: string },
    seconds: number,
    firstTokenSeconds: number | undefined,
    tokens: TokenCounts,
  ): void;
  /**
   * A tool call reached its final `state`, `seconds` after its result started (undefined when its
   * result started before a park: that time was a person's).
   */
  toolCall(tool: string, state: string, seconds: number | undefined): void;
  /** The permission engine decided `behavior` at step `check`. */
  permissionDecision(behavior: string, check: string): void;
  /**
   * The external policy decision point answered `result` (or failed: "error", "timeout") after
   * `seconds`.
   */
  policyDecision(result: PolicyDecisionResult, seconds: number): void;
  /**
   * A park notification (`event`: reply.parked, call.expired, reply.ended) was delivered, failed
   * an attempt (to be retried), became a dead letter, or was not sent because every call it told
   * of was answered first ("superseded").
   */
  notification(event: string, result: NotificationResult): void;
  /** A client input was acknowledged with the gRPC status `code` (its name, e.g. "OK"). */
  inputAcked(code: string): void;
  /** A store operation took `seconds`. */
  storeOperation(operation: StoreOperation, seconds: number): void;
  /** Reads these gauges whenever metrics are collected. */
  observe(sources: GaugeSources): void;
}

/** Metrics and tracing together, as the runtime hands them down. */
export interface Telemetry {
  readonly metrics: Metrics;
  readonly tracing: Tracing;
}

const noSpan: TraceSpan = {
  traceparent: undefined,
  traceId: undefined,
  setAttributes() {},
  end() {},
};

/** Tracing that records nothing. */
export const noTracing: Tracing = { enabled: false, start: () => noSpan, reserve: () => undefined };

/** Metrics that measure nothing. */
export const noMetrics: Metrics = {
  enabled: false,
  replyEnded() {},
  parkAnswered() {},
  modelCall() {},
  toolCall() {},
  permissionDecision() {},
  policyDecision() {},
  notification() {},
  inputAcked() {},
  storeOperation() {},
  observe() {},
};

/** Telemetry that does nothing: the default wherever none is given. */
export const noTelemetry: Telemetry = { metrics: noMetrics, tracing: noTracing };

/** The trace id inside a W3C `traceparent` (`00-<trace id>-<span id>-<flags>`). */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  return traceparent?.split("-")[1];
}
