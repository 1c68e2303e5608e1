import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type {
  GaugeSources,
  Metrics,
  ParkKind,
  PolicyDecisionResult,
  StoreOperation,
  TokenCounts,
} from "../common/telemetry.js";

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
export class PrometheusMetrics implements Metrics {
  readonly enabled = true;
  readonly registry = new Registry();
  private sources: GaugeSources | undefined;
  private readonly replies: Counter;
  private readonly parkWait: Histogram;
  private readonly modelDuration: Histogram;
  private readonly firstToken: Histogram;
  private readonly tokens: Counter;
  private readonly toolCalls: Counter;
  private readonly toolDuration: Histogram;
  private readonly decisions: Counter;
  private readonly policyDecisions: Counter;
  private readonly policyDuration: Histogram;
  private readonly acks: Counter;
  private readonly store: Histogram;
  /** The store histogram's series, one per operation, bound once: a store call hashes no labels. */
  private readonly storeSeries = new Map<StoreOperation, Histogram.Internal<string>>();

  constructor(private readonly tenantLabel = false) {
    const registers = [this.registry];
    const tenant = tenantLabel ? ["tenant"] : [];
    collectDefaultMetrics({ register: this.registry });
    const sources = () => this.sources;
    new Gauge({
      name: "parkway_parked_replies",
      help: "Replies parked now, by agent, as stored: every node sharing a database reports the same count (aggregate with max, not sum).",
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
    this.parkWait = new Histogram({
      name: "parkway_park_wait_seconds",
      help: "From a reply's park to the answer of one of its calls, by what the call waited for.",
      labelNames: ["kind"],
      buckets: WAIT_BUCKETS,
      registers,
    });
    this.replies = new Counter({
      name: "parkway_replies_total",
      help: "Replies ended, by agent and outcome (their finished reason).",
      labelNames: ["agent", "outcome", ...tenant],
      registers,
    });
    this.modelDuration = new Histogram({
      name: "parkway_model_call_duration_seconds",
      help: "Model calls, from the request to the last streamed byte.",
      labelNames: ["agent", "model"],
      buckets: CALL_BUCKETS,
      registers,
    });
    this.firstToken = new Histogram({
      name: "parkway_model_time_to_first_token_seconds",
      help: "From a model request to its first streamed text, thinking or tool call.",
      labelNames: ["agent", "model"],
      buckets: CALL_BUCKETS,
      registers,
    });
    this.tokens = new Counter({
      name: "parkway_model_tokens_total",
      help: "Tokens the model reported, by direction (input, output, cache_read, cache_write).",
      labelNames: ["agent", "model", "direction", ...tenant],
      registers,
    });
    this.toolCalls = new Counter({
      name: "parkway_tool_calls_total",
      help: "Tool calls that reached a final state (success, error, interrupted, denied).",
      labelNames: ["tool", "state"],
      registers,
    });
    this.toolDuration = new Histogram({
      name: "parkway_tool_call_duration_seconds",
      help: "Tool calls from the start of their result to its end (none for a call whose result started before a park: that wait is the park's).",
      labelNames: ["tool", "state"],
      buckets: CALL_BUCKETS,
      registers,
    });
    this.decisions = new Counter({
      name: "parkway_permission_decisions_total",
      help: "The permission engine's decisions, by behavior and the check (or rule kind) that decided.",
      labelNames: ["behavior", "check"],
      registers,
    });
    this.policyDecisions = new Counter({
      name: "parkway_policy_decisions_total",
      help: "Answers of the external policy decision point, by result (allow, ask, deny, or error and timeout when it failed).",
      labelNames: ["result"],
      registers,
    });
    this.policyDuration = new Histogram({
      name: "parkway_policy_request_duration_seconds",
      help: "How long the external policy decision point took to answer (or to fail).",
      buckets: POLICY_BUCKETS,
      registers,
    });
    this.acks = new Counter({
      name: "parkway_input_acks_total",
      help: "Client inputs acknowledged, by gRPC status code.",
      labelNames: ["code"],
      registers,
    });
    this.store = new Histogram({
      name: "parkway_store_operation_duration_seconds",
      help: "Store operations (a scan is timed to its first record).",
      labelNames: ["operation"],
      buckets: STORE_BUCKETS,
      registers,
    });
  }

  observe(sources: GaugeSources): void {
    this.sources = sources;
  }

  replyEnded(agent: string, outcome: string, tenant: string): void {
    this.replies.inc(this.tenantLabel ? { agent, outcome, tenant } : { agent, outcome });
  }

  parkAnswered(kind: ParkKind, seconds: number): void {
    this.parkWait.observe({ kind }, Math.max(0, seconds));
  }

  modelCall(
    call: { agent: string; model: string; tenant: string },
    seconds: number,
    firstTokenSeconds: number | undefined,
    counts: TokenCounts,
  ): void {
    const labels = { agent: call.agent, model: call.model };
    this.modelDuration.observe(labels, seconds);
    if (firstTokenSeconds !== undefined) this.firstToken.observe(labels, firstTokenSeconds);
    for (const [field, direction] of DIRECTIONS) {
      // Every direction, zero included, so that each series exists from the first call.
      this.tokens.inc(
        this.tenantLabel ? { ...labels, direction, tenant: call.tenant } : { ...labels, direction },
        Math.max(0, counts[field]),
      );
    }
  }

  toolCall(tool: string, state: string, seconds: number | undefined): void {
    this.toolCalls.inc({ tool, state });
    if (seconds !== undefined) this.toolDuration.observe({ tool, state }, seconds);
  }

  permissionDecision(behavior: string, check: string): void {
    this.decisions.inc({ behavior, check });
  }

  policyDecision(result: PolicyDecisionResult, seconds: number): void {
    this.policyDecisions.inc({ result });
    this.policyDuration.observe(Math.max(0, seconds));
  }

  inputAcked(code: string): void {
    this.acks.inc({ code });
  }

  storeOperation(operation: StoreOperation, seconds: number): void {
    let series = this.storeSeries.get(operation);
    if (!series) {
      series = this.store.labels({ operation });
      this.storeSeries.set(operation, series);
    }
    series.observe(seconds);
  }
}
