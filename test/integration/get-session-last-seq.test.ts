/**
 * GetSession shows a session as stored: its last_seq is the seq of the last stored event, with the
 * status and waiting calls stored with it, so a client that reads it and then attaches after that
 * seq misses nothing, also when it reads while the write that parks a reply is on its way to the
 * disk. Real server and clients; the scripted model; that write held.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";
import { type WriteFaults, writeFaults } from "../helpers/store-faults.js";

let h: Harness;
let faults: WriteFaults;
let release: (() => void) | undefined;

beforeAll(async () => {
  h = await startHarness({
    turns: [
      {
        match: { lastUser: "" },
        repeat: true,
        text: "Let me look.",
        toolCalls: [{ name: "Bash", input: { command: "touch f && echo f" } }],
      },
    ],
  });
  faults = writeFaults(h.parkway.store);
});

afterAll(async () => {
  release?.();
  await h.close();
});

/**
 * Attaches a Chat stream after `afterSeq`; the function it returns resolves with the first
 * REQUIRE_USER_CONFIRM (stored or announced again) the stream gets, or undefined.
 */
async function firstAnnouncement(
  sessionId: string,
  afterSeq: number,
): Promise<() => Promise<ServerEvent | undefined>> {
  const chat = await h.client.attach(sessionId, { afterSeq });
  return async () => {
    try {
      for (;;) {
        const e = await chat.next(AbortSignal.timeout(5000)).catch(() => undefined);
        if (!e || e.event?.$case === "requireUserConfirm") return e;
      }
    } finally {
      chat.close();
    }
  };
}

describe("GetSession's last_seq", () => {
  it("is stored: a stream attached after it is told of the calls a park being written waits for", async () => {
    const session = await h.client.createSession({ agentId: "test" });
    // The first synced write after the message: the one that parks the reply.
    const hold = faults.holdNext({ synced: true });
    release = hold.release;
    const sent = h.client.send(session.id, {
      $case: "userMessage",
      value: { text: "go", content: [] },
    });
    await hold.held;
    const read = h.client.getSession(session.id);
    const early = await Promise.race([read, sleep(200).then(() => undefined)]);
    let announced: () => Promise<ServerEvent | undefined>;
    let seen = early;
    if (early) {
      // Read while the park is held: a stream attached after its last seq must hear of the calls.
      announced = await firstAnnouncement(session.id, early.lastSeq);
      hold.release();
    } else {
      hold.release();
      seen = await read;
      announced = await firstAnnouncement(session.id, seen.lastSeq);
    }
    release = undefined;
    expect(seen?.pendingToolCalls).toHaveLength(1);
    const event = await announced();
    expect(event?.event?.$case, `after seq ${seen?.lastSeq}`).toBe("requireUserConfirm");
    await sent;
  });
});
