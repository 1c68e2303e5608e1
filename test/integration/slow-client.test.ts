import { runInNewContext } from "node:vm";
import { setFlagsFromString } from "node:v8";
import { once } from "node:events";
import { type ServiceError, status as Status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { FinishedReason } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { type Harness, kind, startHarness } from "../helpers/parkway-harness.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Heap in use after a full collection. */
function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const BACKLOG = 1000;
const DELTAS = 4000;
const CHUNK = 256;

describe("a client that stops reading", () => {
  it("ends with RESOURCE_EXHAUSTED naming the bound; the session and other streams carry on", async () => {
    h = await startHarness(
      {
        turns: [
          // Far more events than the backlog bound and the transport's windows hold, paced so that
          // a client that does read keeps up.
          {
            match: { lastUser: "flood" },
            text: "x".repeat(DELTAS * CHUNK),
            chunkSize: CHUNK,
            delayMs: 1,
          },
          { match: { lastUser: "" }, repeat: true, text: "still here" },
        ],
      },
      {},
      { limits: { streamBacklogEvents: BACKLOG, streamsPerSession: 2 } },
    );
    const session = await h.client.createSession({ agentId: "test" });

    // The slow client: a raw call that reads its first event, then stops reading (its readable
    // side is paused, so grpc-js stops reading the HTTP/2 stream and flow control stops the server's
    // writes once the windows are full). A call never read at all is not slow: grpc-js then buffers
    // everything on the client side.
    const slow = h.client.agentService.chat();
    let slowEvents = 0;
    let reading = false;
    slow.on("data", () => {
      slowEvents++;
      if (!reading) slow.pause();
    });
    const slowEnded = once(slow, "error").then(([err]) => err as ServiceError);
    slow.write({
      sessionId: session.id,
      requestId: "attach-slow",
      event: { $case: "attach", value: { sessionId: session.id, afterSeq: 0 } },
    });

    const before = heapUsed();
    const fast = await h.client.attach(session.id);
    await fast.send({ $case: "userMessage", value: { text: "flood", content: [] } });
    let deltas = 0;
    let end: ServerEvent | undefined;
    for await (const event of fast.untilSettled()) {
      if (kind(event) === "text_block_delta") deltas++;
      if (kind(event) === "reply_end") end = event;
    }
    const grown = heapUsed() - before;

    expect(deltas).toBe(DELTAS);
    expect(end?.event?.$case === "replyEnd" && end.event.value.finishedReason).toBe(
      FinishedReason.FINISHED_REASON_COMPLETED,
    );
    // A generous bound: the server holds at most the backlog, the transport's buffers and the
    // reply's own text for the slow stream, not a copy of every event for as long as it lags.
    expect(grown).toBeLessThan(32 * 1024 * 1024);

    // The server ended the slow stream on its side without waiting for its client: the stream's
    // place under streamsPerSession (2: the slow and the fast one) is free again already.
    const third = await h.client.attach(session.id);
    third.close();

    // The slow client reads again: it gets what was already sent to it, then the status.
    reading = true;
    slow.resume();
    const err = await slowEnded;
    expect(err.code).toBe(Status.RESOURCE_EXHAUSTED);
    expect(err.details).toContain(`limit streamBacklogEvents (${BACKLOG}) reached`);
    expect(slowEvents).toBeGreaterThan(0);
    expect(slowEvents).toBeLessThan(DELTAS);

    // The session keeps working.
    let answer = "";
    for await (const event of fast.message("again")) {
      if (event.event?.$case === "textBlockDelta") answer += event.event.value.delta;
    }
    expect(answer).toBe("still here");
    fast.close();
  });
});
