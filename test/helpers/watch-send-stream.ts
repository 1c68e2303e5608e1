import { randomUUID } from "node:crypto";
import { status as Status } from "@grpc/grpc-js";
import {
  type ParkwayClient,
  ParkwayClientError,
  type SessionInput,
  settlesReply,
} from "../../src/client/index.js";
import { AsyncQueue } from "../../src/client/async-queue.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";

/** What the scenario runner needs of a session's stream: Chat's `ParkwaySession`, or Watch + Send. */
export interface ScenarioStream {
  send(input: SessionInput): Promise<void>;
  interrupt(): Promise<void>;
  untilSettled(signal?: AbortSignal): AsyncGenerator<ServerEvent>;
  close(): void;
}

/**
 * A session driven without a bidi stream: events from `client.watch` (which watches again after a
 * restart, from the last seq it read), inputs through `client.send`, each with a request id of its
 * own, sent again with it while the server is unavailable (a restart), so it applies once.
 */
export class WatchSendStream implements ScenarioStream {
  private readonly queue = new AsyncQueue<ServerEvent>();
  private readonly stop = new AbortController();

  constructor(
    private readonly client: ParkwayClient,
    readonly id: string,
    afterSeq = 0,
  ) {
    void this.pump(afterSeq);
  }

  private async pump(afterSeq: number): Promise<void> {
    try {
      for await (const event of this.client.watch(this.id, {
        afterSeq,
        signal: this.stop.signal,
      })) {
        this.queue.push(event);
      }
      this.queue.close();
    } catch (err) {
      this.queue.close(err as Error);
    }
  }

  async send(input: SessionInput): Promise<void> {
    if (input.$case === "attach") throw new Error("Send takes no attach");
    const requestId = randomUUID();
    const until = Date.now() + 20_000;
    for (;;) {
      try {
        await this.client.send(this.id, input, requestId);
        return;
      } catch (err) {
        const unavailable =
          err instanceof ParkwayClientError && err.code === Number(Status.UNAVAILABLE);
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
