import { afterEach, describe, expect, it } from "vitest";
import { type ParkwayClientError } from "../../src/client/index.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { collect, type Harness, kind, startHarness } from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const confirm = (id: string) => ({
  $case: "userConfirmResult" as const,
  value: {
    replyId: "",
    confirmResults: [
      {
        confirmed: true,
        toolCall: {
          id,
          name: "",
          input: "",
          state: 0,
          suggestedRules: [],
          askUser: undefined,
          decision: undefined,
          expiresAt: undefined,
        },
        rules: [],
        reason: "",
      },
    ],
  },
});

const lookupAgent = {
  externalTools: [
    {
      name: "Deploy",
      description: "Deploys.",
      inputSchema: { type: "object", properties: { target: { type: "string" } } },
    },
  ],
};

describe("answers apply exactly once", () => {
  it("lets exactly one of two racing confirmations apply, 100 times over", async () => {
    h = await startHarness(
      {
        turns: [
          {
            match: { lastUser: "" },
            repeat: true,
            toolCalls: [{ name: "Deploy", input: { target: "x" } }],
          },
          { match: { toolName: "Deploy" }, repeat: true, text: "ok" },
        ],
      },
      lookupAgent,
    );
    const session = await h.client.createSession({ agentId: "test" });
    const a = await h.client.attach(session.id);
    const b = await h.client.attach(session.id);
    let applied = 0;
    let refused = 0;
    for (let i = 0; i < 100; i++) {
      const parked = await collect(a.message(`round ${i}`));
      await collect(b.untilSettled());
      const ask = parked.find((e) => e.event?.$case === "requireUserConfirm");
      const callId =
        ask?.event?.$case === "requireUserConfirm" ? ask.event.value.toolCalls[0]!.id : "";
      const outcomes = await Promise.allSettled([a.send(confirm(callId)), b.send(confirm(callId))]);
      for (const o of outcomes) {
        if (o.status === "fulfilled") applied++;
        else {
          refused++;
          const err = o.reason as ParkwayClientError;
          expect(err.codeName).toBe("FAILED_PRECONDITION");
          // Refused with the call's state, whether the reply was still parked or already running.
          expect(err.preconditionViolations[0]).toMatchObject({
            type: "TOOL_CALL_STATE",
            subject: callId,
          });
        }
      }
      // The confirmed call is handed out once; finish it so the next round can start.
      const handed = await collect(a.untilSettled());
      await collect(b.untilSettled());
      expect(handed.filter((e) => kind(e) === "require_external_execution")).toHaveLength(1);
      await a.send({
        $case: "externalExecutionResult",
        value: {
          replyId: "",
          executionResults: [
            { id: callId, name: "", output: [], state: 1, metadata: undefined, askUser: undefined },
          ],
        },
      });
      await collect(a.untilSettled());
      await collect(b.untilSettled());
    }
    a.close();
    b.close();
    expect(applied).toBe(100);
    expect(refused).toBe(100);
  }, 120_000);

  it("answers a retry with the same request_id with the first outcome, applying nothing twice", async () => {
    h = await startHarness(
      {
        turns: [{ match: { lastUser: "" }, repeat: true, text: "hello" }],
      },
      lookupAgent,
    );
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const message = { $case: "userMessage" as const, value: { text: "once", content: [] } };
    await chat.send(message, "req-1");
    const first = await collect(chat.untilSettled());
    await chat.send(message, "req-1");
    await chat.send({ $case: "userInterrupt", value: { replyId: "" } }, "req-2");
    chat.close();
    const after = await h.client.getSession(session.id);
    expect(after.lastSeq).toBe(first[first.length - 1]!.seq);
    expect(h.model.requests).toHaveLength(1);
    const unary = await h.client.reply({
      sessionId: session.id,
      requestId: "req-1",
      input: message,
    });
    // The retry on Reply gets the first outcome of req-1: the reply's final message.
    expect(unary.message?.id).toBe(first.find((e) => e.event?.$case === "replyEnd")!.replyId);
    expect(unary.message?.finishedReason).toBe(1);
    expect((await h.client.getSession(session.id)).lastSeq).toBe(after.lastSeq);
  });
});

describe("reconnecting", () => {
  it("resumes from the last seq with exactly the events a client that never left saw", async () => {
    h = await startHarness({
      turns: [
        {
          thinking: "hmm",
          text: "a fairly long answer streamed in small pieces",
          chunkSize: 3,
          delayMs: 5,
        },
      ],
    });
    const session = await h.client.createSession({ agentId: "test" });
    const steady = await h.client.attach(session.id);
    const flaky = await h.client.attach(session.id);
    await flaky.send({ $case: "userMessage", value: { text: "talk", content: [] } });
    const seenByFlaky: ServerEvent[] = [];
    while (seenByFlaky.length < 8) seenByFlaky.push((await flaky.next())!);
    flaky.close();
    const rejoined = await h.client.attach(session.id, { afterSeq: flaky.lastSeq });
    seenByFlaky.push(...(await collect(rejoined.untilSettled())));
    rejoined.close();
    const all = await collect(steady.untilSettled());
    steady.close();
    const strip = (e: ServerEvent) => ({ seq: e.seq, id: e.id, event: e.event });
    expect(seenByFlaky.map(strip)).toEqual(all.map(strip));
    expect(seenByFlaky.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
  });

  it("announces each pending call once to a stream that attaches to a parked reply", async () => {
    h = await startHarness({
      turns: [{ toolCalls: [{ id: "c1", name: "Bash", input: { command: "touch f && echo f" } }] }],
    });
    const session = await h.client.createSession({ agentId: "test" });
    const first = await h.client.attach(session.id);
    const parked = await collect(first.message("go"));
    first.close();
    const lastSeq = parked[parked.length - 1]!.seq;
    const announcedIn = async (afterSeq: number) => {
      const chat = await h!.client.attach(session.id, { afterSeq });
      const seen: ServerEvent[] = [];
      for (;;) {
        const e = await chat.next(AbortSignal.timeout(5000));
        seen.push(e!);
        if (e!.seq === 0 || e!.seq === lastSeq) break;
      }
      // A stray second announcement would arrive right after.
      const extra = await chat.next(AbortSignal.timeout(200)).catch(() => undefined);
      if (extra) seen.push(extra);
      chat.close();
      return seen.filter((e) => e.event?.$case === "requireUserConfirm");
    };
    const fromStart = await announcedIn(0);
    expect(fromStart.map((e) => e.seq)).toEqual([lastSeq - 1]);
    const fromEnd = await announcedIn(lastSeq);
    expect(fromEnd.map((e) => [e.seq, e.replayed])).toEqual([[0, true]]);
  });
});
