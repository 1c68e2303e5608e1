import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type {
  GaugeSources,
  Metrics,
  NotificationResult,
  ParkKind,
  PolicyDecisionResult,
  StoreOperation,
  TokenCounts,
} from "../common/telemetry.js";
import {
  BoundCounter,
  BoundHistogram,
  type CounterSeries,
  type HistogramSeries,
} from "./bound-metrics.js";

/** Buckets (seconds) of what a person takes to decide: a second to a day. */
const WAIT_BUCKETS = [1, 5, 15, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 86_400];
/** Buckets (seconds) of model calls and tool calls: 5 ms to 10 minutes. */
const CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180, 600];
/** Buckets (seconds) of a policy service's answers: 1 ms to 1 minute (its longest timeout). */
const POLICY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60];
/** Buckets (seconds) of store operations: 50 µs to 5 s. */
const STORE_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5,
];

const DIRECTIONS: readonly [keyof TokenCounts, string][] = [
  ["inputTokens", "input"],
  ["outputTokens", "output"],
  ["cacheReadTokens", "cache_read"],
  ["cacheWriteTokens", "cache_write"],
];

/**
 * Parkway's metrics in a prom-client registry of their own (so that several servers in one process
 * do not share counts), with the process and Node.js defaults. Tenants are a label only with
 * `tenantLabel` (of replies and tokens, what a bill needs): otherwise their number would multiply
 * every series.
 */
/** The series one model's calls update, bound once per agent and model (and tenant). */
interface ModelSeries {
  duration: HistogramSeries;
  firstToken: HistogramSeries;
  tokens: [keyof TokenCounts, CounterSeries][];
}

/**
 * Parkway's metrics in a prom-client registry of their own (so that several servers in one process
 * do not share counts), with the process and Node.js defaults. The counters and histograms that a
 * reply updates have bound series (`bound-metrics.ts`): an update on a reply's path is an addition.
 * Tenants are a label only with `tenantLabel` (of replies and tokens, what a bill needs): otherwise
 * their number would multiply every series.
 */
export class PrometheusMetrics implements Metrics {
  readonly enabled = true;
  readonly registry = new Registry();
  private sources: GaugeSources | undefined;
  private readonly replies: BoundCounter;
  private readonly parkWait: BoundHistogram;
  private readonly modelDuration: BoundHistogram;
  private readonly firstToken: BoundHistogram;
  private readonly tokens: BoundCounter;
  private readonly toolCalls: BoundCounter;
  private readonly toolDuration: BoundHistogram;
  private readonly decisions: BoundCounter;
  private readonly policyDecisions: BoundCounter;
  private readonly policyDuration: HistogramSeries;
  private readonly notifications: BoundCounter;
  private readonly acks: BoundCounter;
  private readonly store: BoundHistogram;
  private readonly models = new Map<string, ModelSeries>();

  constructor(private readonly tenantLabel = false) {
    const registers = [this.registry];
    const registry = this.registry;
    const tenant = tenantLabel ? ["tenant"] : [];
    collectDefaultMetrics({ register: this.registry });
    const sources = () => this.sources;
    new Gauge({
      name: "parkway_parked_replies",
      help: "Replies parked, by agent, as stored: every node sharing a database reports the same count (aggregate with max, not sum). A count is reused for 125 µs per reply it counted (12.5 s at 100k).",
      labelNames: ["agent"],
      registers,
      async collect() {
        this.reset();
        const counts = await sources()?.parkedReplies();
        for (const [agent, n] of counts ?? []) this.set({ agent }, n);
      },
    });
    new Gauge({
      name: "parkway_streams",
      help: "Chat and Watch streams open on this node.",
      registers,
      collect() {
        this.set(sources()?.streams() ?? 0);
      },
    });
    new Gauge({
      name: "parkway_session_actors",
      help: "Session actors in memory on this node (sessions with a stream, a running reply or a call under way).",
      registers,
      collect() {
        this.set(sources()?.sessionActors() ?? 0);
      },
    });
    this.parkWait = new BoundHistogram(
      "parkway_park_wait_seconds",
      "From a reply's park to the answer of one of its calls, by what the call waited for.",
      ["kind"],
      WAIT_BUCKETS,
      registry,
    );
    this.replies = new BoundCounter(
      "parkway_replies_total",
      "Replies ended, by agent and outcome (their finished reason).",
      ["agent", "outcome", ...tenant],
      registry,
    );
    this.modelDuration = new BoundHistogram(
      "parkway_model_call_duration_seconds",
      "Model calls, from the request to the last streamed byte.",
      ["agent", "model"],
      CALL_BUCKETS,
      registry,
    );
    this.firstToken = new BoundHistogram(
      "parkway_model_time_to_first_token_seconds",
      "From a model request to its first streamed text, thinking or tool call.",
      ["agent", "model"],
      CALL_BUCKETS,
      registry,
    );
    this.tokens = new BoundCounter(
      "parkway_model_tokens_total",
      "Tokens the model reported, by direction (input, output, cache_read, cache_write).",
      ["agent", "model", "direction", ...tenant],
      registry,
    );
    this.toolCalls = new BoundCounter(
      "parkway_tool_calls_total",
      "Tool calls that reached a final state (success, error, interrupted, denied).",
      ["tool", "state"],
      registry,
    );
    this.toolDuration = new BoundHistogram(
      "parkway_tool_call_duration_seconds",
      "Tool calls from the start of their result to its end (none for a call whose result started before a park: that wait is the park's).",
      ["tool", "state"],
      CALL_BUCKETS,
      registry,
    );
    this.decisions = new BoundCounter(
      "parkway_permission_decisions_total",
      "The permission engine's decisions, by behavior and the check (or rule kind) that decided.",
      ["behavior", "check"],
      registry,
    );
    this.policyDecisions = new BoundCounter(
      "parkway_policy_decisions_total",
      "Answers of the external policy decision point, by result (allow, ask, deny, or error and timeout when it failed).",
      ["result"],
      registry,
    );
    this.policyDuration = new BoundHistogram(
      "parkway_policy_request_duration_seconds",
      "How long the external policy decision point took to answer (or to fail).",
      [],
      POLICY_BUCKETS,
      registry,
    ).series();
    this.notifications = new BoundCounter(
      "parkway_notifications_total",
      "Park notification attempts, by event and result: delivered, failed (retried later), dead (given up after the last attempt: see AuditService.ListDeadLetters), superseded (every call it told of was answered first).",
      ["event", "result"],
      registry,
    );
    this.acks = new BoundCounter(
      "parkway_input_acks_total",
      "Client inputs acknowledged, by gRPC status code.",
      ["code"],
      registry,
    );
    this.store = new BoundHistogram(
      "parkway_store_operation_duration_seconds",
      "Store operations (a scan is timed to its first record).",
      ["operation"],
      STORE_BUCKETS,
      registry,
    );
  }

  observe(sources: GaugeSources): void {
    this.sources = sources;
  }

  replyEnded(agent: string, outcome: string, tenant: string): void {
    const series = this.tenantLabel
      ? this.replies.series(agent, outcome, tenant)
      : this.replies.series(agent, outcome);
    series.inc();
  }

  parkAnswered(kind: ParkKind, seconds: number): void {
    this.parkWait.series(kind).observe(Math.max(0, seconds));
  }

  modelCall(
    call: { agent: string; model: string; tenant: string },
    seconds: number,
    firstTokenSeconds: number | undefined,
    counts: TokenCounts,
  ): void {
    const series = this.modelSeries(call);
    series.duration.observe(seconds);
    if (firstTokenSeconds !== undefined) series.firstToken.observe(firstTokenSeconds);
    // Every direction, zero included, so that each series exists from the first call.
    for (const [field, tokens] of series.tokens) tokens.inc(Math.max(0, counts[field]));
  }

  private modelSeries(call: { agent: string; model: string; tenant: string }): ModelSeries {
    const { agent, model } = call;
    const tenant = this.tenantLabel ? [call.tenant] : [];
    const key = `${agent}\u0000${model}\u0000${tenant.join("")}`;
    let series = this.models.get(key);
    if (!series) {
      series = {
        duration: this.modelDuration.series(agent, model),
        firstToken: this.firstToken.series(agent, model),
        tokens: DIRECTIONS.map(([field, direction]) => [
          field,
          this.tokens.series(agent, model, direction, ...tenant),
        ]),
      };
      this.models.set(key, series);
    }
    return series;
  }

  toolCall(tool: string, state: string, seconds: number | undefined): void {
    this.toolCalls.series(tool, state).inc();
    if (seconds !== undefined) this.toolDuration.series(tool, state).observe(seconds);
  }

  permissionDecision(behavior: string, check: string): void {
    this.decisions.series(behavior, check).inc();
  }

  policyDecision(result: PolicyDecisionResult, seconds: number): void {
    this.policyDecisions.series(result).inc();
    this.policyDuration.observe(Math.max(0, seconds));
  }

  notification(event: string, result: NotificationResult): void {
    this.notifications.series(event, result).inc();
  }

  inputAcked(code: string): void {
    this.acks.series(code).inc();
  }

  storeOperation(operation: StoreOperation, seconds: number): void {
    this.store.series(operation).observe(seconds);
  }
}
