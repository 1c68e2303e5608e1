import { randomUUID } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { ParkwayClientError, type SessionInput, settlesReply } from "../../src/client/index.js";
import { AsyncQueue } from "../../src/client/async-queue.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import type { ScenarioStream } from "./watch-send-stream.js";
import { type WebProtocol, WebAgentClient } from "./web-client.js";

/**
 * A session driven over the web port: events from Watch, inputs through Send (each with a request
 * id of its own, sent again with it while the server is unavailable), as a browser would, over the
 * Connect protocol or gRPC-web.
 */
export class WebWatchSendStream implements ScenarioStream {
  private readonly queue = new AsyncQueue<ServerEvent>();
  private readonly stop = new AbortController();
  private readonly client: WebAgentClient;

  constructor(
    baseUrl: string,
    protocol: WebProtocol,
    readonly id: string,
    afterSeq = 0,
  ) {
    this.client = new WebAgentClient(baseUrl, protocol);
    void this.pump(afterSeq);
  }

  private async pump(afterSeq: number): Promise<void> {
    try {
      for await (const event of this.client.watch(this.id, afterSeq, this.stop.signal)) {
        this.queue.push(event);
      }
      this.queue.close();
    } catch (err) {
      this.queue.close(err as Error);
    }
  }

  async send(input: SessionInput): Promise<void> {
    const requestId = randomUUID();
    const until = Date.now() + 20_000;
    for (;;) {
      try {
        await this.client.send(this.id, input, requestId);
        return;
      } catch (err) {
        const unavailable =
          err instanceof ParkwayClientError && err.code === Number(Code.Unavailable);
        if (!unavailable || Date.now() > until) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  interrupt(): Promise<void> {
    return this.send({ $case: "userInterrupt", value: { replyId: "" } });
  }

  async *untilSettled(signal?: AbortSignal): AsyncGenerator<ServerEvent> {
    for (;;) {
      const event = await this.queue.next(signal);
      if (!event) return;
      yield event;
      if (settlesReply(event)) return;
    }
  }

  close(): void {
    this.stop.abort();
    this.queue.close();
  }
}
