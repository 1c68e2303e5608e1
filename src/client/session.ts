import { randomUUID } from "node:crypto";
import { type ClientDuplexStream, type Metadata, status as Status } from "@grpc/grpc-js";
import type { AgentServiceClient } from "../generated/parkway/v1/agent_service.js";
import type { ToolCallBlock } from "../generated/parkway/v1/content.js";
import type { ClientEvent, ServerEvent } from "../generated/parkway/v1/events.js";
import { AsyncQueue } from "./async-queue.js";
import { fromRpcStatus, fromServiceError, type ParkwayClientError } from "./errors.js";
import {
  type Answer,
  askUserResult,
  type ConfirmOptions,
  confirmation,
  denial,
  type ExternalResult,
  executionResult,
} from "./inputs.js";

/** How long a closed stream may take to end before it is cancelled (see `close`). */
const CLOSE_GRACE_MS = 1000;

/** The input part of a ClientEvent. */
export type SessionInput = NonNullable<ClientEvent["event"]>;

/** True for the events that end a reply's stretch of events: REPLY_END, or REPLY_PARKED. */
export function settlesReply(event: ServerEvent): boolean {
  return event.event?.$case === "replyEnd" || event.event?.$case === "replyParked";
}

/** How a session behaves when its stream breaks. */
export interface SessionOptions {
  afterSeq?: number;
  metadata?: () => Metadata;
  /** Re-attach after UNAVAILABLE for up to this long (ms); 0 disables it. Default 30 s. */
  reconnectForMs?: number;
  /** How long an input waits for its acknowledgement (ms); default 30 s. */
  ackTimeoutMs?: number;
  /** Called once when the session is closed. */
  onClose?: () => void;
}

interface PendingInput {
  event: SessionInput;
  resolve: () => void;
  reject: (e: unknown) => void;
  timer: NodeJS.Timeout;
}

/**
 * One Chat stream attached to a session. Events arrive in seq order, each exactly once, and are read
 * with `next()` or `for await`. When the stream breaks with UNAVAILABLE (a server restart), the
 * session re-attaches from the last seq it saw and resends the inputs whose acknowledgement was lost
 * with their request ids, so nothing is missed and nothing applies twice. Inputs resolve when the
 * server applied them and reject with a `ParkwayClientError` (status + field violations) when it
 * refused them.
 */
export class ParkwaySession {
  private readonly queue = new AsyncQueue<ServerEvent>();
  private readonly pending = new Map<string, PendingInput>();
  private call!: ClientDuplexStream<ClientEvent, ServerEvent>;
  private closed = false;
  /** Calls whose REQUIRE_* this session delivered (kind and id). */
  private readonly delivered = new Set<string>();
  private reconnecting = false;
  /** The seq of the last event received. */
  lastSeq: number;
  /** Resolves once the server accepted the (first) attach. */
  readonly attached: Promise<void>;

  constructor(
    private readonly client: AgentServiceClient,
    readonly id: string,
    private readonly options: SessionOptions = {},
  ) {
    this.lastSeq = options.afterSeq ?? 0;
    this.attached = this.open();
  }

  private open(): Promise<void> {
    const metadata = this.options.metadata?.();
    const call = metadata ? this.client.chat(metadata) : this.client.chat();
    this.call = call;
    call.on("data", (event: ServerEvent) => this.receive(event));
    const attachId = randomUUID();
    call.on("error", (err) => {
      if (call !== this.call) return;
      const error = fromServiceError(err);
      if (this.reconnecting) this.settleInput(attachId, error);
      else void this.broken(error);
    });
    call.on("end", () => {
      if (call === this.call) void this.broken(undefined);
    });
    const attach = this.input(
      { $case: "attach", value: { sessionId: this.id, afterSeq: this.lastSeq } },
      attachId,
    );
    // Inputs whose acknowledgement was lost with the last stream go again, with their request ids.
    for (const [requestId, p] of this.pending) {
      if (p.event.$case !== "attach") this.write(requestId, p.event);
    }
    return attach;
  }

  private async broken(error: ParkwayClientError | undefined): Promise<void> {
    if (this.closed || this.reconnecting) return;
    const reconnectFor = this.options.reconnectForMs ?? 30_000;
    if (error?.code === Status.UNAVAILABLE && reconnectFor > 0) {
      this.reconnecting = true;
      try {
        await this.reconnect(reconnectFor);
        return;
      } catch (err) {
        error = err as ParkwayClientError;
      } finally {
        this.reconnecting = false;
      }
    }
    this.fail(error);
  }

  /** Re-attaches with backoff until it succeeds, a refusal other than UNAVAILABLE, or the time is up. */
  private async reconnect(reconnectFor: number): Promise<void> {
    const until = Date.now() + reconnectFor;
    for (let delay = 100; Date.now() < until && !this.closed; delay = Math.min(delay * 2, 2000)) {
      await new Promise((resolve) => setTimeout(resolve, delay));
      try {
        await this.open();
        // An attach the last stream lost (the first one, refused UNAVAILABLE) is answered by this one.
        for (const [requestId, p] of this.pending) {
          if (p.event.$case === "attach") this.settleInput(requestId);
        }
        return;
      } catch (err) {
        if (Number((err as ParkwayClientError).code) !== Number(Status.UNAVAILABLE)) throw err;
      }
    }
    throw new Error(`could not reattach within ${reconnectFor} ms`);
  }

  /** Resolves or rejects the input waiting for `requestId`. */
  private settleInput(requestId: string, error?: Error): void {
    const waiter = this.pending.get(requestId);
    if (!waiter) return;
    this.pending.delete(requestId);
    clearTimeout(waiter.timer);
    if (error) waiter.reject(error);
    else waiter.resolve();
  }

  private receive(event: ServerEvent): void {
    if (event.event?.$case === "inputAck") {
      const ack = event.event.value;
      const ok = !ack.status || ack.status.code === 0;
      this.settleInput(ack.requestId, ok ? undefined : fromRpcStatus(ack.status!));
      return;
    }
    if (event.seq !== 0) {
      if (event.seq <= this.lastSeq) return; // already delivered before a reconnect
      this.lastSeq = event.seq;
    }
    const announced = this.announcement(event);
    if (announced) this.queue.push(announced);
  }

  /**
   * Remembers the calls a REQUIRE_* announces; a re-announcement (seq 0, after a reconnect) keeps
   * only the calls this session has not delivered yet, and is dropped when none is left.
   */
  private announcement(event: ServerEvent): ServerEvent | undefined {
    const e = event.event;
    if (e?.$case !== "requireUserConfirm" && e?.$case !== "requireExternalExecution") return event;
    const key = (id: string) => `${e.$case}:${id}`;
    const fresh = e.value.toolCalls.filter((c) => !this.delivered.has(key(c.id)));
    for (const c of fresh) this.delivered.add(key(c.id));
    if (event.seq !== 0) return event;
    if (fresh.length === 0) return undefined;
    return { ...event, event: { ...e, value: { toolCalls: fresh } } };
  }

  private fail(error: Error | undefined): void {
    for (const waiter of this.pending.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(error ?? new Error("the stream ended before the server answered"));
    }
    this.pending.clear();
    this.queue.close(error);
  }

  private write(requestId: string, event: SessionInput): void {
    this.call.write({ sessionId: this.id, requestId, event });
  }

  private input(event: SessionInput, requestId: string = randomUUID()): Promise<void> {
    return new Promise((resolve, reject) => {
      const timeout = this.options.ackTimeoutMs ?? 30_000;
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        reject(new Error(`no acknowledgement within ${timeout} ms`));
      }, timeout);
      timer.unref();
      this.pending.set(requestId, { event, resolve, reject, timer });
      this.write(requestId, event);
    });
  }

  /** Sends one input; resolves when the server applied it, rejects when it refused it. */
  send(event: SessionInput, requestId?: string): Promise<void> {
    return this.input(event, requestId);
  }

  /** The next event; undefined when the stream ended; rejects with the stream's error. */
  next(signal?: AbortSignal): Promise<ServerEvent | undefined> {
    return this.queue.next(signal);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ServerEvent> {
    for (;;) {
      const event = await this.next();
      if (!event) return;
      yield event;
    }
  }

  /** Yields events until (and including) the next REPLY_END or REPLY_PARKED. */
  async *untilSettled(signal?: AbortSignal): AsyncGenerator<ServerEvent> {
    for (;;) {
      const event = await this.next(signal);
      if (!event) return;
      yield event;
      if (settlesReply(event)) return;
    }
  }

  /**
   * Sends a user message and yields the reply's events until it finishes (REPLY_END) or parks
   * (REPLY_PARKED). Throws a `ParkwayClientError` when the server refuses the message.
   */
  async *message(text: string, signal?: AbortSignal): AsyncGenerator<ServerEvent> {
    await this.send({ $case: "userMessage", value: { text, content: [] } });
    yield* this.untilSettled(signal);
  }

  /** Allows a call awaiting confirmation, optionally accepting rules or editing its input. */
  confirm(call: ToolCallBlock, options?: ConfirmOptions): Promise<void> {
    return this.send({
      $case: "userConfirmResult",
      value: { replyId: "", confirmResults: [confirmation(call, options)] },
    });
  }

  /** Denies a call awaiting confirmation; the model sees the reason. */
  deny(call: ToolCallBlock, reason = ""): Promise<void> {
    return this.send({
      $case: "userConfirmResult",
      value: { replyId: "", confirmResults: [denial(call, reason)] },
    });
  }

  /** Sends the result of an external call. */
  submitResult(call: ToolCallBlock, result: ExternalResult): Promise<void> {
    return this.send({
      $case: "externalExecutionResult",
      value: { replyId: "", executionResults: [executionResult(call, result)] },
    });
  }

  /** Answers an AskUser call: a label, labels, or `{ other }` text per question. */
  answer(call: ToolCallBlock, answers: Record<string, Answer>): Promise<void> {
    return this.send({
      $case: "externalExecutionResult",
      value: { replyId: "", executionResults: [askUserResult(call, answers)] },
    });
  }

  /** Interrupts the running or parked reply (a no-op on an idle session). */
  interrupt(replyId = ""): Promise<void> {
    return this.send({ $case: "userInterrupt", value: { replyId } });
  }

  /**
   * Ends the stream: no more events are delivered. The stream is half-closed, which the server
   * ends at once when the session runs no reply; one still open after `CLOSE_GRACE_MS` (a reply
   * running) is cancelled. A cancel resets the stream, and HTTP/2 servers close the connection of
   * a client that resets streams faster than their rate limit (about 1,000 at once, then 33 a
   * second), failing every other call on it.
   */
  close(): void {
    if (!this.closed) this.options.onClose?.();
    this.closed = true;
    const call = this.call;
    call.end();
    const timer = setTimeout(() => call.cancel(), CLOSE_GRACE_MS);
    timer.unref();
    call.once("status", () => clearTimeout(timer));
    this.fail(undefined);
  }
}
