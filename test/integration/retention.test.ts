import { afterEach, describe, expect, it } from "vitest";
import { type ParkwayClientError } from "../../src/client/index.js";
import { collect, type Harness, startHarness } from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("event retention", () => {
  it("compacts the events of older finished replies and says so when they are asked for", async () => {
    h = await startHarness(
      { turns: [{ match: { lastUser: "" }, repeat: true, text: "reply text" }] },
      {},
      { retention: { keepFinishedReplies: 2 } },
    );
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const first = await collect(chat.message("one"));
    const second = await collect(chat.message("two"));
    const third = await collect(chat.message("three"));
    chat.close();
    const boundary = second[0]!.seq - 1;

    const err = await h.client.attach(session.id).then(
      () => undefined,
      (e: unknown) => e as ParkwayClientError,
    );
    expect(err?.codeName).toBe("FAILED_PRECONDITION");
    expect(err?.message).toContain(`events up to seq ${boundary}`);
    expect(first[first.length - 1]!.seq).toBe(boundary);

    // The kept replies replay in full, gap-free from the first kept seq.
    const kept = await h.client.attach(session.id, { afterSeq: boundary });
    const replay = [];
    while (replay.length < second.length + third.length) replay.push((await kept.next())!);
    kept.close();
    expect(replay.map((e) => e.seq)).toEqual([...second, ...third].map((e) => e.seq));
    // The model still sees the whole conversation: compacted replies live on as messages.
    const last = h.model.requests[h.model.requests.length - 1]!;
    expect(last.messages.filter((m) => m.role === "assistant")).toHaveLength(2);
  });
});
