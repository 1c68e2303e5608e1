import { afterEach, describe, expect, it } from "vitest";
import type { ParkwayClientError } from "../../src/client/index.js";
import { collect, type Harness, startHarness } from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as ParkwayClientError,
  );

const limits = {
  messageBytes: 64 * 1024,
  sessionsPerTenant: 2,
  runningReplies: 1,
  streamsPerSession: 1,
  inputsPerSecond: 2,
};

describe("limits", () => {
  it("answers RESOURCE_EXHAUSTED naming the limit, and the server keeps working", async () => {
    h = await startHarness(
      {
        turns: [
          {
            match: { lastUser: "slow" },
            text: "slowly streamed answer",
            chunkSize: 1,
            delayMs: 40,
          },
          { match: { lastUser: "" }, repeat: true, text: "quick" },
        ],
      },
      {},
      { limits },
    );
    const a = await h.client.createSession({ agentId: "test" });
    const b = await h.client.createSession({ agentId: "test" });
    const third = await refusal(h.client.createSession({ agentId: "test" }));
    expect(third?.codeName).toBe("RESOURCE_EXHAUSTED");
    expect(third?.message).toContain("sessionsPerTenant");

    const chatA = await h.client.attach(a.id);
    const second = await refusal(h.client.attach(a.id));
    expect(second?.codeName).toBe("RESOURCE_EXHAUSTED");
    expect(second?.message).toContain("streamsPerSession");

    await chatA.send({ $case: "userMessage", value: { text: "slow", content: [] } });
    const busy = await refusal(
      h.client.reply({
        sessionId: b.id,
        input: { $case: "userMessage", value: { text: "hi", content: [] } },
      }),
    );
    expect(busy?.codeName).toBe("RESOURCE_EXHAUSTED");
    expect(busy?.message).toContain("runningReplies");
    await collect(chatA.untilSettled());

    const flood = await Promise.allSettled(
      Array.from({ length: 6 }, () =>
        chatA.send({ $case: "userInterrupt", value: { replyId: "" } }),
      ),
    );
    const tooFast = flood.filter((r) => r.status === "rejected");
    expect(tooFast.length).toBeGreaterThan(0);
    expect((tooFast[0] as PromiseRejectedResult).reason).toMatchObject({
      codeName: "RESOURCE_EXHAUSTED",
    });
    chatA.close();

    const huge = await refusal(
      h.client.reply({
        sessionId: b.id,
        input: { $case: "userMessage", value: { text: "x".repeat(100 * 1024), content: [] } },
      }),
    );
    expect(huge?.codeName).toBe("RESOURCE_EXHAUSTED");
    const fine = await h.client.reply({
      sessionId: b.id,
      input: { $case: "userMessage", value: { text: "hi", content: [] } },
    });
    expect(fine.message?.finishedReason).toBe(1);
  });

  it("refuses a message past messageBytes naming the limit; a Chat stream carries on", async () => {
    h = await startHarness(
      { turns: [{ match: { lastUser: "" }, repeat: true, text: "quick" }] },
      {},
      { limits: { messageBytes: 64 * 1024 } },
    );
    const session = await h.client.createSession({ agentId: "test" });
    const big = (bytes: number) => ({
      $case: "userMessage" as const,
      value: { text: "x".repeat(bytes), content: [] },
    });
    const chat = await h.client.attach(session.id);
    const refused = await refusal(chat.send(big(100 * 1024)));
    expect(refused?.codeName).toBe("RESOURCE_EXHAUSTED");
    expect(refused?.message).toMatch(
      /limit messageBytes \(65536\) reached: the request is \d+ bytes/,
    );
    // The same stream takes the next message.
    const events = await collect(chat.message("hi"));
    expect(events.at(-1)?.event?.$case).toBe("replyEnd");
    chat.close();

    const unary = await refusal(h.client.reply({ sessionId: session.id, input: big(100 * 1024) }));
    expect(unary?.codeName).toBe("RESOURCE_EXHAUSTED");
    expect(unary?.message).toContain("limit messageBytes (65536) reached");
    // Past twice the limit, the transport refuses it unread.
    const huge = await refusal(h.client.reply({ sessionId: session.id, input: big(200 * 1024) }));
    expect(huge?.codeName).toBe("RESOURCE_EXHAUSTED");
    // Nothing of the refused messages was kept: the session holds "hi" and its answer.
    const { messages } = await h.client.listMessages(session.id);
    const texts = messages.flatMap((m) =>
      m.content.map((block) => (block.block?.$case === "text" ? block.block.value.text : "")),
    );
    expect(texts.sort()).toEqual(["hi", "quick"]);
  });

  it("counts a reply toward runningReplies while it runs, after its start or an answer, not while it is parked", async () => {
    h = await startHarness(
      {
        turns: [
          {
            match: { lastUser: "^park$" },
            toolCalls: [{ id: "w", name: "Bash", input: { command: "echo x > a.txt" } }],
            repeat: true,
          },
          {
            match: { toolName: "Bash" },
            text: "slowly streamed answer",
            chunkSize: 1,
            delayMs: 40,
            repeat: true,
          },
          { match: { lastUser: "^hi$" }, text: "quick", repeat: true },
        ],
      },
      {},
      { limits: { runningReplies: 1 } },
    );
    const hi = (sessionId: string) =>
      h!.client.reply({
        sessionId,
        input: { $case: "userMessage", value: { text: "hi", content: [] } },
      });
    const a = await h.client.createSession({ agentId: "test" });
    const b = await h.client.createSession({ agentId: "test" });
    const chatA = await h.client.attach(a.id);
    const parked = await collect(chatA.message("park"));
    expect(parked.at(-1)?.event?.$case).toBe("replyParked");
    // Parked, it runs nothing: another session's reply may run.
    expect((await hi(b.id)).message?.finishedReason).toBe(1);
    // Answered, it runs again, and counts.
    const ask = parked.find((e) => e.event?.$case === "requireUserConfirm");
    const call =
      ask?.event?.$case === "requireUserConfirm" ? ask.event.value.toolCalls[0] : undefined;
    await chatA.confirm(call!);
    const busy = await refusal(hi(b.id));
    expect(busy?.codeName).toBe("RESOURCE_EXHAUSTED");
    expect(busy?.message).toContain("runningReplies");
    const resumed = await collect(chatA.untilSettled());
    expect(resumed.at(-1)?.event?.$case).toBe("replyEnd");
    // Ended, it counts no more.
    expect((await hi(b.id)).message?.finishedReason).toBe(1);
    chatA.close();
  });

  it("counts concurrent creates one at a time: no more sessions than sessionsPerTenant", async () => {
    h = await startHarness({ turns: [] }, {}, { limits: { sessionsPerTenant: 3 } });
    const tries = await Promise.all(
      Array.from({ length: 12 }, () => refusal(h!.client.createSession({ agentId: "test" }))),
    );
    const refused = tries.filter((e) => e !== undefined);
    expect(refused).toHaveLength(9);
    for (const e of refused) expect(e?.codeName).toBe("RESOURCE_EXHAUSTED");
    const listed = await h.client.listSessions({ pageSize: 100 });
    expect(listed.sessions).toHaveLength(3);

    // Deleting one frees one place, also when deletes and creates race.
    await Promise.all([
      h.client.deleteSession(listed.sessions[0]!.id),
      h.client.deleteSession(listed.sessions[1]!.id),
    ]);
    const again = await Promise.all(
      Array.from({ length: 5 }, () => refusal(h!.client.createSession({ agentId: "test" }))),
    );
    expect(again.filter((e) => e === undefined)).toHaveLength(2);
    expect((await h.client.listSessions({ pageSize: 100 })).sessions).toHaveLength(3);
  });
});
