import { performance } from "node:perf_hooks";
import type { EventBody } from "../agent/events.js";
import type { DecisionInfo, FinishedReason, Failure, Msg, ToolCallBlock } from "../agent/types.js";
import type { ParkKind, Telemetry } from "../common/telemetry.js";
import { type Deferred, DeferredSpans } from "./deferred-spans.js";
import type { ReplyData } from "./records.js";

/** Whose reply it is, as metrics label it and spans name it. */
export interface ReplyOwner {
  sessionId: string;
  agent: string;
  tenant: string;
}

interface ModelCall {
  model: string;
  /** The `traceparent` reserved for its span (the model request carries it). */
  trace: string | undefined;
  span: Deferred;
  at: number;
  firstToken?: number;
  toolCalls: boolean;
}

interface ToolCall {
  span: Deferred;
  at: number;
  name: string;
}

const seconds = (from: number, to: number) => (to - from) / 1000;

/** The call `id` in `message`. */
function findCall(message: Msg | undefined, id: string): ToolCallBlock | undefined {
  for (const block of message?.content ?? []) {
    if (block.type === "tool_call" && block.id === id) return block;
  }
  return undefined;
}

/** What a parked call waits for. */
export function parkKind(call: ToolCallBlock): ParkKind {
  if (call.state === "asking") return "confirm";
  return call.name === "AskUser" ? "ask_user" : "external";
}

/**
 * The metrics and spans of one run of a reply (from its start or resume to its end or park),
 * read from the events it emits. The reply's span (`invoke_agent`, OpenTelemetry's GenAI
 * conventions) is the child of the caller's span; its `traceparent` is reserved when the reply
 * starts and stored with it, so each later run (after an answer, on any node, after a restart) is
 * a span under it, and so is the park, from REQUIRE_* to the answer. Model calls (`chat`) and tool
 * calls (`execute_tool`) are the run's children.
 *
 * Metrics are counted as the events come. Spans are timed as the events come too, but handed to
 * the tracer after the current turn of the event loop, behind the write that stores those events
 * (the hub issues it first): starting, ending and exporting a span costs tens of microseconds,
 * which would otherwise delay what the write makes visible. Ids are reserved up front, so a child
 * (and the model request's `traceparent`) knows its parent before the parent's span exists.
 */
export class ReplyTelemetry {
  /** The run's span, once handed to the tracer. */
  private run: Deferred | undefined;
  /** The `traceparent` of the run's span (its children's parent). */
  private runTrace: string | undefined;
  private model: ModelCall | undefined;
  private readonly tools = new Map<string, ToolCall>();
  private readonly spans: DeferredSpans;

  constructor(
    private readonly t: Telemetry,
    private readonly owner: ReplyOwner,
  ) {
    this.spans = new DeferredSpans(t.tracing);
  }

  /**
   * The reply runs, from its start or after an answer that `caller` (a `traceparent`) sent. A new
   * reply's span is the child of the caller's; a resumed run is the child of the reply's span,
   * linked to the caller's. The reply's `traceparent` is reserved now, to be stored with the write
   * that starts it. `at`: when it started (epoch milliseconds), if before now.
   */
  running(data: ReplyData, caller: string | undefined, at?: number): void {
    if (!this.t.tracing.enabled) return;
    const resumed = data.trace !== undefined;
    const parent = resumed ? data.trace : caller;
    const reserved = this.t.tracing.reserve(parent);
    data.trace ??= reserved;
    this.runTrace = reserved;
    const { sessionId, agent } = this.owner;
    this.run = this.spans.start(`invoke_agent ${agent}`, {
      parent,
      reserved,
      ...(at === undefined ? {} : { at }),
      links: resumed && caller ? [caller] : [],
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "gen_ai.conversation.id": sessionId,
        "parkway.reply.id": data.replyId,
        "parkway.reply.resumed": resumed,
      },
    });
  }

  /** The `traceparent` the model call under way carries onward. */
  get modelTraceparent(): string | undefined {
    return this.model?.trace;
  }

  /** The permission engine decided on a call (its span shows the decision stored on the call). */
  decided(decision: DecisionInfo): void {
    this.t.metrics.permissionDecision(decision.behavior, decision.check);
    if (decision.policy) {
      this.t.metrics.policyDecision(decision.policy.result, decision.policy.latencyMs / 1000);
    }
  }

  /** Every event the reply emits; `message` is the reply's message (to name a call). */
  event(body: EventBody, message?: Msg): void {
    const now = performance.now(); // monotonic, below the millisecond

    switch (body.type) {
      case "model_call_start": {
        const trace = this.t.tracing.reserve(this.runTrace);
        this.model = {
          model: body.modelName,
          at: now,
          toolCalls: false,
          trace,
          span: trace
            ? this.spans.start(`chat ${body.modelName}`, {
                parent: this.runTrace,
                reserved: trace,
                kind: "client",
                attributes: {
                  "gen_ai.operation.name": "chat",
                  "gen_ai.request.model": body.modelName,
                  "gen_ai.agent.name": this.owner.agent,
                },
              })
            : {},
        };
        return;
      }
      case "text_block_delta":
      case "thinking_block_delta":
      case "tool_call_start":
        if (this.model) {
          this.model.firstToken ??= now;
          if (body.type === "tool_call_start") this.model.toolCalls = true;
        }
        return;
      case "model_call_end":
        this.modelEnded(body, now);
        return;
      case "tool_result_start":
        this.tools.set(body.toolCallId, {
          at: now,
          name: body.toolCallName,
          span: this.toolSpan(
            body.toolCallId,
            body.toolCallName,
            findCall(message, body.toolCallId),
          ),
        });
        return;
      case "tool_result_end": {
        const tool = this.tools.get(body.toolCallId);
        this.tools.delete(body.toolCallId);
        if (!tool) {
          // Its result started before a park (or a restart): counted, with no duration of its own.
          const name = findCall(message, body.toolCallId)?.name;
          if (name) this.t.metrics.toolCall(name, body.state, undefined);
          return;
        }
        this.t.metrics.toolCall(tool.name, body.state, seconds(tool.at, now));
        this.spans.end(
          tool.span,
          { "parkway.tool.state": body.state },
          body.state === "error" ? { error: "tool_error" } : {},
        );
        return;
      }
      default:
        return;
    }
  }

  private modelEnded(body: Extract<EventBody, { type: "model_call_end" }>, now: number): void {
    const call = this.model;
    if (!call) return;
    this.model = undefined;
    const { usage } = body;
    const first = call.firstToken === undefined ? undefined : seconds(call.at, call.firstToken);
    const { agent, tenant } = this.owner;
    this.t.metrics.modelCall(
      { agent, model: call.model, tenant },
      seconds(call.at, now),
      first,
      usage,
    );
    if (!this.t.tracing.enabled) return;
    const finish =
      body.finishedReason === "completed"
        ? call.toolCalls
          ? "tool_calls"
          : "stop"
        : body.finishedReason;
    this.spans.end(
      call.span,
      {
        "gen_ai.usage.input_tokens": usage.inputTokens,
        "gen_ai.usage.output_tokens": usage.outputTokens,
        "gen_ai.usage.cache_read.input_tokens": usage.cacheReadTokens,
        "gen_ai.response.finish_reasons": [finish],
      },
      body.finishedReason === "error" ? { error: "model_error" } : {},
    );
  }

  private toolSpan(callId: string, name: string, call: ToolCallBlock | undefined): Deferred {
    if (!this.t.tracing.enabled) return {};
    const decision = call?.decision;
    return this.spans.start(`execute_tool ${name}`, {
      parent: this.runTrace,
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": callId,
        "parkway.permission.behavior": decision?.behavior,
        "parkway.permission.check": decision?.check,
      },
    });
  }

  /**
   * The run stopped because the reply parked. Results already started wait for people now: their
   * time is the park's, not the tool's.
   */
  parked(): void {
    for (const tool of this.tools.values()) this.spans.end(tool.span);
    this.tools.clear();
    if (this.run) this.spans.end(this.run, { "parkway.reply.state": "parked" });
    this.run = undefined;
  }

  /**
   * Answers came for `answered`, parked since `since` (call id → ISO time): one wait each, and the
   * park's span, under the reply's, from the earliest park to now, linked to the answering caller.
   */
  answered(
    data: ReplyData,
    answered: readonly ToolCallBlock[],
    since: Readonly<Record<string, string>>,
    caller: string | undefined,
  ): void {
    const now = Date.now();
    let first = now;
    const kinds = new Set<ParkKind>();
    for (const call of answered) {
      const at = since[call.id] === undefined ? undefined : Date.parse(since[call.id] as string);
      if (at === undefined || Number.isNaN(at)) continue;
      const kind = parkKind(call);
      kinds.add(kind);
      first = Math.min(first, at);
      this.t.metrics.parkAnswered(kind, seconds(at, now));
    }
    if (!this.t.tracing.enabled || kinds.size === 0) return;
    const span = this.spans.start("park", {
      parent: data.trace,
      at: first,
      links: caller ? [caller] : [],
      attributes: {
        "parkway.reply.id": data.replyId,
        "parkway.park.kinds": [...kinds],
        "parkway.park.calls": answered.map((c) => c.id),
      },
    });
    this.spans.end(span);
  }

  /** The reply ended (its REPLY_END is stored). */
  ended(finishedReason: FinishedReason, error: Failure | undefined): void {
    this.t.metrics.replyEnded(this.owner.agent, finishedReason, this.owner.tenant);
    for (const tool of this.tools.values())
      this.spans.end(tool.span, undefined, { error: "unfinished" });
    this.tools.clear();
    if (!this.run) return;
    this.spans.end(
      this.run,
      { "parkway.reply.finished_reason": finishedReason },
      error ? { error: error.code } : {},
    );
    this.run = undefined;
  }
}
