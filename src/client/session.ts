import { randomUUID } from "node:crypto";
import type { CallOptions, ClientDuplexStream, Metadata } from "@grpc/grpc-js";
import type { AgentServiceClient } from "../generated/parkway/v1/agent_service.js";
import type { ClientEvent, ServerEvent } from "../generated/parkway/v1/events.js";
import { AsyncQueue } from "./async-queue.js";
import { fromRpcStatus, fromServiceError } from "./errors.js";

/** The input part of a ClientEvent. */
export type SessionInput = NonNullable<ClientEvent["event"]>;

/** True for the events that end a reply's stretch of events: REPLY_END, or REPLY_PARKED. */
export function settlesReply(event: ServerEvent): boolean {
  return event.event?.$case === "replyEnd" || event.event?.$case === "replyParked";
}

/**
 * One Chat stream attached to a session. Events arrive in seq order and are read with `next()` or
 * `for await`; inputs resolve when the server acknowledges them and reject with a
 * `ParkwayClientError` (status + field violations) when refused.
 */
export class ParkwaySession {
  private readonly queue = new AsyncQueue<ServerEvent>();
  private readonly acks = new Map<string, { resolve: () => void; reject: (e: unknown) => void }>();
  private readonly call: ClientDuplexStream<ClientEvent, ServerEvent>;
  /** The seq of the last event received. */
  lastSeq: number;
  /** Resolves once the server accepted the attach. */
  readonly attached: Promise<void>;

  constructor(
    client: AgentServiceClient,
    readonly id: string,
    options: { afterSeq?: number; metadata?: Metadata; callOptions?: Partial<CallOptions> } = {},
  ) {
    this.lastSeq = options.afterSeq ?? 0;
    this.call = options.metadata
      ? client.chat(options.metadata, options.callOptions ?? {})
      : client.chat(options.callOptions ?? {});
    this.call.on("data", (event: ServerEvent) => this.receive(event));
    this.call.on("error", (err) => this.fail(fromServiceError(err)));
    this.call.on("end", () => this.fail(undefined));
    this.attached = this.send({
      $case: "attach",
      value: { sessionId: id, afterSeq: this.lastSeq },
    });
  }

  private receive(event: ServerEvent): void {
    if (event.event?.$case === "inputAck") {
      const ack = event.event.value;
      const waiter = this.acks.get(ack.requestId);
      this.acks.delete(ack.requestId);
      if (!waiter) return;
      if (!ack.status || ack.status.code === 0) waiter.resolve();
      else waiter.reject(fromRpcStatus(ack.status));
      return;
    }
    if (event.seq > this.lastSeq) this.lastSeq = event.seq;
    this.queue.push(event);
  }

  private fail(error: Error | undefined): void {
    for (const waiter of this.acks.values()) {
      waiter.reject(error ?? new Error("the stream ended before the server answered"));
    }
    this.acks.clear();
    this.queue.close(error);
  }

  /** Sends one input; resolves when the server applied it, rejects when it refused it. */
  send(event: SessionInput, requestId: string = randomUUID()): Promise<void> {
    return new Promise((resolve, reject) => {
      this.acks.set(requestId, { resolve, reject });
      this.call.write({ sessionId: this.id, requestId, event });
    });
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

  /** Interrupts the running or parked reply (a no-op on an idle session). */
  interrupt(replyId = ""): Promise<void> {
    return this.send({ $case: "userInterrupt", value: { replyId } });
  }

  /** Ends the stream. */
  close(): void {
    this.call.end();
    this.call.cancel();
  }
}
