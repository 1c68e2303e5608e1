import { performance } from "node:perf_hooks";
import type { EventBody } from "../agent/events.js";
import type { DecisionInfo, FinishedReason, Failure, Msg, ToolCallBlock } from "../agent/types.js";
import type { ParkKind, Telemetry, TraceSpan } from "../common/telemetry.js";
import type { ReplyData } from "./records.js";

/** Whose reply it is, as metrics label it and spans name it. */
export interface ReplyOwner {
  sessionId: string;
  agent: string;
  tenant: string;
}

interface ModelCall {
  model: string;
  span: TraceSpan;
  at: number;
  firstToken?: number;
  toolCalls: boolean;
}

interface ToolCall {
  span: TraceSpan;
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
 * conventions) is started when the reply starts, as the child of the caller's span; its
 * `traceparent` is stored with the reply, so each later run (after an answer, on any node, after a
 * restart) is a span under it, and so is the park, from REQUIRE_* to the answer. Model calls
 * (`chat`) and tool calls (`execute_tool`) are the run's children.
 */
export class ReplyTelemetry {
  private run: TraceSpan | undefined;
  /** Starts the run's span (see `running`). */
  private pending: (() => void) | undefined;
  private model: ModelCall | undefined;
  private readonly tools = new Map<string, ToolCall>();

  constructor(
    private readonly t: Telemetry,
    private readonly owner: ReplyOwner,
  ) {}

  /**
   * The reply runs, from its start or after an answer that `caller` (a `traceparent`) sent. A new
   * reply's span is the child of the caller's; a resumed run is the child of the reply's span,
   * linked to the caller's. The reply's `traceparent` is reserved now, to be stored with the write
   * that starts it; the span itself starts right after that write is issued (with the time of now),
   * or at the reply's first event if that comes first.
   */
  running(data: ReplyData, caller: string | undefined): void {
    if (!this.t.tracing.enabled) return;
    const resumed = data.trace !== undefined;
    const reserved = resumed ? undefined : this.t.tracing.reserve(caller);
    data.trace ??= reserved;
    const at = Date.now();
    const { sessionId, agent } = this.owner;
    this.pending = () => {
      this.run = this.t.tracing.start(`invoke_agent ${agent}`, {
        parent: resumed ? data.trace : caller,
        reserved,
        at,
        links: resumed && caller ? [caller] : [],
        attributes: {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.name": agent,
          "gen_ai.conversation.id": sessionId,
          "parkway.reply.id": data.replyId,
          "parkway.reply.resumed": resumed,
        },
      });
    };
    setImmediate(() => this.startRun());
  }

  /** Starts the run's span if it is still to start. */
  private startRun(): void {
    const pending = this.pending;
    this.pending = undefined;
    pending?.();
  }

  /** The `traceparent` the model call under way carries onward. */
  get modelTraceparent(): string | undefined {
    return this.model?.span.traceparent;
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
      case "model_call_start":
        this.model = {
          model: body.modelName,
          at: now,
          toolCalls: false,
          span: this.t.tracing.start(`chat ${body.modelName}`, {
            parent: this.run?.traceparent,
            kind: "client",
            attributes: {
              "gen_ai.operation.name": "chat",
              "gen_ai.request.model": body.modelName,
              "gen_ai.agent.name": this.owner.agent,
            },
          }),
        };
        return;
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
        this.startRun();
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
        tool.span.setAttributes({ "parkway.tool.state": body.state });
        tool.span.end(body.state === "error" ? { error: "tool_error" } : {});
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
    const finish =
      body.finishedReason === "completed"
        ? call.toolCalls
          ? "tool_calls"
          : "stop"
        : body.finishedReason;
    call.span.setAttributes({
      "gen_ai.usage.input_tokens": usage.inputTokens,
      "gen_ai.usage.output_tokens": usage.outputTokens,
      "gen_ai.usage.cache_read.input_tokens": usage.cacheReadTokens,
      "gen_ai.response.finish_reasons": [finish],
    });
    call.span.end(body.finishedReason === "error" ? { error: "model_error" } : {});
  }

  private toolSpan(callId: string, name: string, call: ToolCallBlock | undefined): TraceSpan {
    const decision = call?.decision;
    return this.t.tracing.start(`execute_tool ${name}`, {
      parent: this.run?.traceparent,
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
    this.startRun();
    for (const tool of this.tools.values()) tool.span.end();
    this.tools.clear();
    this.run?.setAttributes({ "parkway.reply.state": "parked" });
    this.run?.end();
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
    const span = this.t.tracing.start("park", {
      parent: data.trace,
      at: first,
      links: caller ? [caller] : [],
      attributes: {
        "parkway.reply.id": data.replyId,
        "parkway.park.kinds": [...kinds],
        "parkway.park.calls": answered.map((c) => c.id),
      },
    });
    span.end({ at: now });
  }

  /** The reply ended (its REPLY_END is stored). */
  ended(finishedReason: FinishedReason, error: Failure | undefined): void {
    this.startRun();
    this.t.metrics.replyEnded(this.owner.agent, finishedReason, this.owner.tenant);
    for (const tool of this.tools.values()) tool.span.end({ error: "unfinished" });
    this.tools.clear();
    if (!this.run) return;
    this.run.setAttributes({ "parkway.reply.finished_reason": finishedReason });
    this.run.end(error ? { error: error.code } : {});
    this.run = undefined;
  }
}
