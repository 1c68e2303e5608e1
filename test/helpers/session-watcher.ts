import { randomUUID } from "node:crypto";
import { type ClientDuplexStream, status as Status } from "@grpc/grpc-js";
import type { ParkwayClient } from "../../src/client/index.js";
import type { ClientEvent, ServerEvent } from "../../src/generated/parkway/v1/events.js";

/**
 * A raw Chat stream attached to a session from seq 0 that keeps every event it is sent, without the
 * client library's filtering, so that a duplicate or a gap shows. When the stream breaks with
 * UNAVAILABLE (a node restarting), it attaches again after the highest seq it holds.
 */
export class SessionWatcher {
  /** Every event with a seq, as delivered (a duplicate would appear twice). */
  readonly events: ServerEvent[] = [];
  /** What went wrong: a refusal other than UNAVAILABLE, an unexpected event without a seq. */
  readonly problems: string[] = [];
  private call: ClientDuplexStream<ClientEvent, ServerEvent> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly client: ParkwayClient,
    readonly sessionId: string,
  ) {
    this.open();
  }

  /** The highest seq received. */
  get lastSeq(): number {
    return this.events.reduce((max, e) => Math.max(max, e.seq), 0);
  }

  private open(): void {
    const call = this.client.agentService.chat();
    this.call = call;
    call.on("data", (event: ServerEvent) => {
      if (event.event?.$case === "inputAck") return;
      if (event.seq > 0) this.events.push(event);
      // Without a seq, only a pending call announced again after an attach is expected.
      else if (!event.replayed) this.problems.push(`an event without a seq: ${event.event?.$case}`);
    });
    call.on("error", (err: { code?: number; message: string }) => {
      if (err.code === Status.UNAVAILABLE) this.again(call);
      else if (call === this.call && !this.closed) this.problems.push(err.message);
    });
    call.on("end", () => this.again(call));
    const sessionId = this.sessionId;
    call.write({
      sessionId,
      requestId: randomUUID(),
      event: { $case: "attach", value: { sessionId, afterSeq: this.lastSeq } },
    });
  }

  /** Attaches again shortly, once per broken stream. */
  private again(call: ClientDuplexStream<ClientEvent, ServerEvent>): void {
    if (call !== this.call || this.closed) return;
    this.call = undefined;
    this.retry = setTimeout(() => this.open(), 200);
  }

  /** Resolves once the watcher holds `seq`, or after `timeoutMs`. */
  async reach(seq: number, timeoutMs = 10_000): Promise<void> {
    for (const until = Date.now() + timeoutMs; this.lastSeq < seq && Date.now() < until;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    this.call?.end();
    this.call?.cancel();
  }
}
