import { afterEach, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";

/**
 * A session is held in memory only while something needs it: a stream attached, a reply running or
 * a call under way. Everything else, parked replies included, lives in the store alone.
 */
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Waits until `check` holds (the last step of a settle happens just after its write). */
async function eventually(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}

/**
 * Runs `fn` over `items`, `width` at a time, each lane with a client (a connection) of its own: a
 * single HTTP/2 connection that cancels thousands of streams in a burst may be closed by the HTTP/2
 * layer (a guard against rapid resets), which would fail unrelated calls on it.
 */
async function pool<T>(
  address: string,
  items: T[],
  width: number,
  fn: (client: ParkwayClient, item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async (_, worker) => {
      // A connection per worker (grpc-js shares one among clients with equal options): streams
      // cancelled faster than HTTP/2's reset rate limit on one connection get it closed.
      const client = createParkwayClient(address, { keepalive: { timeMs: 60_000 + worker } });
      try {
        while (next < items.length) await fn(client, items[next++]!);
      } finally {
        client.close();
      }
    }),
  );
}

describe("session actors", () => {
  it("leave memory once 2,000 sessions detached mid-reply have settled", async () => {
    h = await startHarness({
      defaults: { chunkSize: 4, delayMs: 10 },
      turns: [{ match: { lastUser: "" }, repeat: true, text: "a reply that takes a while" }],
    });
    const harness = h;
    const ids = Array.from({ length: 2_000 }, (_, i) => i);
    const sessions: string[] = [];
    let detachedRunning = 0;
    await pool(harness.parkway.address, ids, 32, async (client) => {
      const { id } = await client.createSession({ agentId: "test" });
      sessions.push(id);
      const chat = await client.attach(id);
      for await (const { event } of chat.message("go")) {
        if (event?.$case === "textBlockDelta") break; // mid-reply: detach while it runs
      }
      chat.close();
      if ((await client.getSession(id)).status === SessionStatus.SESSION_STATUS_RUNNING) {
        detachedRunning++;
      }
    });
    expect(detachedRunning).toBeGreaterThan(1_000); // most were still running when detached
    await pool(harness.parkway.address, sessions, 8, async (client, id) => {
      for (;;) {
        const { status } = await client.getSession(id);
        if (status !== SessionStatus.SESSION_STATUS_RUNNING) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    });
    await eventually(() => harness.parkway.liveSessions() === 0);
    expect(harness.parkway.liveSessions()).toBe(0);
  }, 240_000);

  it("are not kept by parked replies, refused inputs, refused attaches or permission calls", async () => {
    h = await startHarness({
      turns: [
        {
          match: { lastUser: "" },
          repeat: true,
          toolCalls: [{ name: "Bash", input: { command: "touch parked.txt" } }],
        },
      ],
    });
    const { client } = h;
    const { id } = await client.createSession({ agentId: "test" });
    const chat = await client.attach(id);
    let parked = false;
    for await (const { event } of chat.message("park")) {
      if (event?.$case === "replyParked") parked = true;
    }
    expect(parked).toBe(true);
    expect(h.parkway.liveSessions()).toBe(1); // the stream holds it
    chat.close();
    await eventually(() => h!.parkway.liveSessions() === 0);
    expect(h.parkway.liveSessions()).toBe(0);

    // A refused input: a user message while the reply is parked.
    const refused = await client
      .reply({
        sessionId: id,
        input: { $case: "userMessage", value: { text: "again", content: [] } },
      })
      .then(
        () => "applied",
        (err: { code?: number }) => err.code,
      );
    expect(refused).not.toBe("applied");
    expect(h.parkway.liveSessions()).toBe(0);

    // A refused attach: after_seq beyond the session's last seq.
    const beyond = await client.attach(id, { afterSeq: 1_000_000 }).then(
      (s) => {
        s.close();
        return "attached";
      },
      () => "refused",
    );
    expect(beyond).toBe("refused");
    await eventually(() => h!.parkway.liveSessions() === 0);
    expect(h.parkway.liveSessions()).toBe(0);

    // Reads and permission calls that load the session.
    await client.listRules({ sessionId: id });
    await client.explain({
      sessionId: id,
      toolName: "Bash",
      input: JSON.stringify({ command: "ls" }),
    });
    expect(h.parkway.liveSessions()).toBe(0);
  });
});
