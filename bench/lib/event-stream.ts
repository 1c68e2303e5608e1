import { randomUUID } from "node:crypto";
import { Client, type ClientDuplexStream, credentials, Metadata } from "@grpc/grpc-js";
import type { AgentServiceClient } from "../../src/generated/parkway/v1/agent_service.js";
import { type ClientEvent, ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { EchoService, TEMPLATE_KEY } from "./echo-service.js";
import { nowUs } from "./stats.js";

/** A received event with its arrival time (µs, `nowUs`). */
export interface Arrival {
  event: ServerEvent;
  at: number;
}

/**
 * A raw bidi stream (the generated grpc-js stub, no client library on top) that timestamps every
 * event as it arrives, so Parkway and the bare echo are measured through the same client code.
 */
export class EventStream {
  private readonly arrived: Arrival[] = [];
  private wake: (() => void) | undefined;
  private failure: Error | undefined;
  private ended = false;

  constructor(private readonly call: ClientDuplexStream<ClientEvent, ServerEvent>) {
    call.on("data", (event: ServerEvent) => {
      this.arrived.push({ event, at: nowUs() });
      this.notify();
    });
    call.on("error", (err: Error) => {
      this.failure = err;
      this.notify();
    });
    call.on("end", () => {
      this.ended = true;
      this.notify();
    });
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Writes an event; returns the time just before the write (µs). */
  send(event: ClientEvent): number {
    const at = nowUs();
    this.call.write(event);
    return at;
  }

  /** The next arrival; rejects when the stream failed or ended. */
  async next(): Promise<Arrival> {
    for (;;) {
      const a = this.arrived.shift();
      if (a) return a;
      if (this.failure) throw this.failure;
      if (this.ended) throw new Error("the stream ended");
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Arrivals up to and including the first one `stop` accepts. */
  async until(stop: (e: ServerEvent) => boolean): Promise<Arrival[]> {
    const out: Arrival[] = [];
    for (;;) {
      const a = await this.next();
      out.push(a);
      if (stop(a.event)) return out;
    }
  }

  close(): void {
    this.call.end();
    this.call.cancel();
  }

  /**
   * Half-closes the stream and waits for the server to end it (it does at once when no reply
   * runs): no reset, which HTTP/2 servers count against a connection past a thousand or so.
   */
  async finish(): Promise<void> {
    this.call.end();
    while (!this.ended && !this.failure) {
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.arrived.length = 0;
    }
  }
}

/** The kind of an event: its oneof case, e.g. "replyStart", "inputAck". */
export const caseOf = (e: ServerEvent): string => e.event?.$case ?? "none";

/** A ClientEvent with a fresh request id. */
export function clientEvent(sessionId: string, event: ClientEvent["event"]): ClientEvent {
  return { sessionId, requestId: randomUUID(), event };
}

/** Opens a Chat stream on Parkway and attaches it to a session (after_seq 0); waits for the ack. */
export async function attachRaw(
  agentService: AgentServiceClient,
  sessionId: string,
): Promise<EventStream> {
  const stream = new EventStream(agentService.chat());
  stream.send(clientEvent(sessionId, { $case: "attach", value: { sessionId, afterSeq: 0 } }));
  await stream.until((e) => e.event?.$case === "inputAck");
  return stream;
}

/** A grpc-js client of the bare echo. */
export function echoClient(address: string): Client {
  return new Client(address, credentials.createInsecure());
}

/**
 * Opens an echo stream whose answers are copies of `template` (and, for the bare relay and the
 * bare park, of the other templates in `more`, by metadata key).
 */
export function openEcho(
  client: Client,
  template: ServerEvent,
  more: Record<string, ServerEvent> = {},
): EventStream {
  const md = new Metadata();
  md.set(TEMPLATE_KEY, Buffer.from(ServerEvent.encode(template).finish()));
  for (const [key, event] of Object.entries(more)) {
    md.set(key, Buffer.from(ServerEvent.encode(event).finish()));
  }
  const def = EchoService.chat;
  return new EventStream(
    client.makeBidiStreamRequest<ClientEvent, ServerEvent>(
      def.path,
      def.requestSerialize,
      def.responseDeserialize,
      md,
    ),
  );
}
