import { status as Status } from "@grpc/grpc-js";
import { expect, it } from "vitest";
import { ParkwayClientError } from "../../src/client/index.js";
import type { ReplyRequest } from "../../src/generated/parkway/v1/agent_service.js";
import { startHarness } from "../helpers/parkway-harness.js";

/** A small seeded PRNG (mulberry32), so a failing run can be replayed. */
function prng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = Number(process.env.PARKWAY_FUZZ_SEED ?? 20261130);
const COUNT = Number(process.env.PARKWAY_FUZZ_COUNT ?? 10_000);

it(`answers ${COUNT} hostile inputs with proper statuses and changes nothing on a refusal`, async () => {
  const random = prng(SEED);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const h = await startHarness(
    {
      turns: [
        {
          match: { lastUser: "^park" },
          repeat: true,
          toolCalls: [{ name: "Bash", input: { command: "touch f && echo f" } }],
        },
        { match: { lastUser: "" }, repeat: true, text: "fine" },
        { match: { toolName: "Bash" }, repeat: true, text: "ran" },
      ],
    },
    {},
    { limits: { messageBytes: 256 * 1024, inputsPerSecond: 1e9 } },
  );
  try {
    const idle = await h.client.createSession({ agentId: "test" });
    const parked = await h.client.createSession({ agentId: "test" });
    const parkedReply = await h.client.reply({
      sessionId: parked.id,
      input: { $case: "userMessage", value: { text: "park here", content: [] } },
    });
    const parkedCall = parkedReply.pendingToolCalls[0]!;
    const ids = [
      idle.id,
      parked.id,
      "",
      "ses_nope",
      "x".repeat(300),
      "../../etc/passwd",
      "\u0000\uffff",
    ];
    const callIds = [parkedCall.id, "", "call_nope", "x".repeat(5000)];
    const strings = [
      "",
      "a",
      "{",
      '{"command":1}',
      "{}",
      "null",
      "x".repeat(300_000),
      "\u{1F600}".repeat(100),
    ];
    const randomInt = () => pick([0, 1, 2, 3, 4, 5, 6, 7, 99, -1, 2 ** 31 - 1]);
    const toolCall = () => ({
      id: pick(callIds),
      name: pick(["", "Bash", "AskUser", "Nope"]),
      input: pick(strings),
      state: randomInt(),
      suggestedRules: [],
      askUser: undefined,
      decision: undefined,
      expiresAt: undefined,
    });
    const inputs: (() => ReplyRequest["input"])[] = [
      () => undefined,
      () => ({ $case: "userMessage", value: { text: pick(strings), content: [] } }),
      () => ({
        $case: "userInterrupt",
        value: { replyId: pick(["", "reply_nope", parkedReply.message?.id ?? ""]) },
      }),
      () => ({
        $case: "userConfirmResult",
        value: {
          replyId: pick(["", "reply_nope"]),
          confirmResults: Array.from({ length: Math.floor(random() * 3) }, () => ({
            confirmed: random() < 0.5,
            toolCall: random() < 0.9 ? toolCall() : undefined,
            rules:
              random() < 0.5
                ? []
                : [
                    {
                      id: "",
                      toolName: pick(["", "Bash"]),
                      ruleContent: pick(strings),
                      behavior: randomInt(),
                      scope: randomInt(),
                      source: randomInt(),
                      createdBy: "",
                      createdAt: undefined,
                      sessionId: "",
                      agentId: "",
                      toolCallId: "",
                    },
                  ],
            reason: pick(strings),
          })),
        },
      }),
      () => ({
        $case: "externalExecutionResult",
        value: {
          replyId: "",
          executionResults: Array.from({ length: Math.floor(random() * 3) }, () => ({
            id: pick(callIds),
            name: "",
            output: [],
            state: randomInt(),
            metadata: random() < 0.5 ? undefined : { junk: pick(strings) },
            askUser:
              random() < 0.5
                ? undefined
                : { answers: [{ question: pick(strings), selected: [pick(strings)] }] },
          })),
        },
      }),
    ];
    const counts = new Map<string, number>();
    let before = await h.parkway.store.digest();
    for (let i = 0; i < COUNT; i++) {
      const sessionId = pick(ids);
      const kind = Math.floor(random() * 5);
      let outcome: string;
      try {
        if (kind === 0) {
          await h.client.reply({
            sessionId,
            requestId: random() < 0.1 ? "dup" : "",
            input: pick(inputs)(),
          });
        } else if (kind === 1) {
          await h.client.getSession(sessionId);
        } else if (kind === 2) {
          await h.client.listSessions({
            status: randomInt(),
            pageSize: pick([0, 1, 5, 5000]),
            pageToken: pick(strings).slice(0, 50),
          });
        } else if (kind === 3) {
          await h.client.listAuditRecords({
            sessionId: random() < 0.3 ? "" : sessionId,
            toolCallId: random() < 0.5 ? "" : pick(callIds),
            pageSize: pick([0, 1, 5, 5000]),
            pageToken: random() < 0.5 ? "" : pick(strings).slice(0, 80),
          });
        } else {
          const toolName = pick(["Bash", "", "Read", "Nope"]);
          const input = pick(strings);
          await h.client.explain({ sessionId, toolName, input });
        }
        outcome = "OK";
      } catch (err) {
        expect(err, `input ${i}`).toBeInstanceOf(ParkwayClientError);
        const e = err as ParkwayClientError;
        expect([Status.INTERNAL, Status.UNKNOWN], `input ${i}: ${e.message}`).not.toContain(e.code);
        outcome = e.codeName;
      }
      counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
      const after = await h.parkway.store.digest();
      if (outcome !== "OK")
        expect(after, `input ${i} was refused (${outcome}) but changed the store`).toBe(before);
      before = after;
    }
    console.log(
      `fuzz: ${COUNT} inputs (seed ${SEED}): ${JSON.stringify(Object.fromEntries(counts))}`,
    );
    // The server still works.
    const ok = await h.client.reply({
      sessionId: idle.id,
      input: { $case: "userMessage", value: { text: "still there?", content: [] } },
    });
    expect(ok.message?.finishedReason).toBeGreaterThan(0);
  } finally {
    await h.close();
  }
}, 300_000);
