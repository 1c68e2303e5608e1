import { afterEach, describe, expect, it } from "vitest";
import type { ParkwayClientError } from "../../src/client/index.js";
import { AuditKind } from "../../src/generated/parkway/v1/audit.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import type { ClientEvent } from "../../src/generated/parkway/v1/events.js";
import {
  allEvents,
  collect,
  type Harness,
  kind,
  startedCalls,
  startHarness,
} from "../helpers/parkway-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const question = {
  question: "Which database?",
  header: "Database",
  options: [
    { label: "Postgres", description: "Relational, hosted" },
    { label: "SQLite", description: "Embedded file" },
  ],
};
const askUser = { name: "AskUser", input: { questions: [question] } };

async function refusal(p: Promise<unknown>): Promise<ParkwayClientError> {
  return p.then(
    () => {
      throw new Error("expected a refusal");
    },
    (e: unknown) => e as ParkwayClientError,
  );
}

/** An external execution result for `call` with `metadata` and no typed answers. */
function result(
  call: string,
  metadata: Record<string, unknown>,
  state = ToolResultState.TOOL_RESULT_STATE_SUCCESS,
): NonNullable<ClientEvent["event"]> & { $case: "externalExecutionResult" } {
  return {
    $case: "externalExecutionResult",
    value: {
      replyId: "",
      executionResults: [
        { id: call, name: "AskUser", output: [], state, metadata, askUser: undefined },
      ],
    },
  };
}

describe("AskUser answers carried in a result's metadata", () => {
  it("refuse an entry that is not an answer object over Chat, Send and Reply, naming it, and change nothing; a declined question keeps any metadata", async () => {
    h = await startHarness({
      turns: [{ toolCalls: [askUser] }, { toolCalls: [askUser] }, { text: "Done." }],
    });
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const parked = await collect(chat.message("set up"));
    expect(parked.map(kind).slice(-2)).toEqual(["require_external_execution", "reply_parked"]);
    const [ask] = startedCalls(parked);
    const before = await h.client.getSession(session.id);

    const bad: [unknown, string, RegExp][] = [
      [
        null,
        "external_execution_result.execution_results[0].ask_user.answers[0]",
        /expected object/,
      ],
      [5, "external_execution_result.execution_results[0].ask_user.answers[0]", /expected object/],
      [
        "Postgres",
        "external_execution_result.execution_results[0].ask_user.answers[0]",
        /expected object/,
      ],
      [
        ["Postgres"],
        "external_execution_result.execution_results[0].ask_user.answers[0]",
        /expected object/,
      ],
      [
        { selected: ["Postgres"] },
        "external_execution_result.execution_results[0].ask_user.answers[0].question",
        /string/,
      ],
      [
        { question: question.question, selected: [1] },
        "external_execution_result.execution_results[0].ask_user.answers[0].selected[0]",
        /string/,
      ],
      [
        { question: question.question, selected: "Postgres" },
        "external_execution_result.execution_results[0].ask_user.answers[0].selected",
        /array/,
      ],
      [
        { question: question.question, other: { text: "MySQL" } },
        "external_execution_result.execution_results[0].ask_user.answers[0].other",
        /string/,
      ],
    ];
    for (const [entry, field, description] of bad) {
      const input = result(ask!, { answers: [entry] });
      const refusals = [
        await refusal(chat.send(input)),
        await refusal(h.client.send(session.id, input)),
        await refusal(h.client.reply({ sessionId: session.id, input })),
      ];
      for (const err of refusals) {
        const shown = `${JSON.stringify(entry)}: ${err.codeName} ${err.message}`;
        expect(err.codeName, shown).toBe("INVALID_ARGUMENT");
        // The entry, and then the question it leaves unanswered.
        expect(err.fieldViolations[0]?.field, shown).toBe(field);
        expect(err.fieldViolations[0]?.description, shown).toMatch(description);
        expect(err.fieldViolations.slice(1), shown).toEqual([
          {
            field: "external_execution_result.execution_results[0].ask_user.answers",
            description: 'question "Which database?" is not answered',
          },
        ]);
      }
    }
    // Beside a valid answer, only the entry is refused.
    const mixed = await refusal(
      chat.send(
        result(ask!, { answers: [{ question: question.question, selected: ["SQLite"] }, null] }),
      ),
    );
    expect(mixed.fieldViolations.map((v) => v.field)).toEqual([
      "external_execution_result.execution_results[0].ask_user.answers[1]",
    ]);

    // Thousands of bad entries: the refusal keeps its first violations, within a client's limits.
    const many = await refusal(
      h.client.send(session.id, result(ask!, { answers: new Array(5000).fill(null) })),
    );
    expect(many.codeName).toBe("INVALID_ARGUMENT");
    expect(many.fieldViolations[0]?.field).toBe(
      "external_execution_result.execution_results[0].ask_user.answers[0]",
    );
    expect(many.fieldViolations.length).toBeGreaterThan(5);
    expect(many.fieldViolations.length).toBeLessThan(100);
    expect(Buffer.byteLength(many.message)).toBeLessThanOrEqual(1024);

    // Nothing stored changed: the reply is parked on the same call.
    const after = await h.client.getSession(session.id);
    expect(after.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_EXTERNAL_RESULT);
    expect(after.lastSeq).toBe(before.lastSeq);
    expect(after.pendingToolCalls.map((c) => c.id)).toEqual([ask]);

    // A correct answer resumes the reply, which asks again.
    await chat.send(
      result(ask!, { answers: [{ question: question.question, selected: ["SQLite"] }] }),
    );
    const again = await collect(chat.untilSettled());
    expect(again.map(kind).slice(-2)).toEqual(["require_external_execution", "reply_parked"]);
    const end = again.find((e) => e.event?.$case === "toolResultEnd");
    expect(end?.event?.$case === "toolResultEnd" && end.event.value.askUser?.answers).toEqual([
      { question: question.question, selected: ["SQLite"] },
    ]);

    // A declined question keeps its metadata unchecked; what it holds is no typed answer, and the
    // events that carry it still reach every stream.
    const [second] = startedCalls(again);
    await chat.send(
      result(second!, { answers: [null, 5] }, ToolResultState.TOOL_RESULT_STATE_DENIED),
    );
    const done = await collect(chat.untilSettled());
    chat.close();
    expect(done.map(kind).at(-1)).toBe("reply_end");
    const declined = done.find((e) => e.event?.$case === "toolResultEnd");
    expect(declined?.event?.$case === "toolResultEnd" && declined.event.value).toMatchObject({
      state: ToolResultState.TOOL_RESULT_STATE_DENIED,
      metadata: { answers: [null, 5] },
      askUser: undefined,
    });
    const replayed = await allEvents(h.client, session.id);
    expect(replayed.map(kind).at(-1)).toBe("reply_end");
    const { messages } = await h.client.listMessages(session.id);
    expect(messages.length).toBeGreaterThan(0);
    const { records } = await h.client.listAuditRecords({ sessionId: session.id });
    const answered = records.filter((r) => r.kind === AuditKind.AUDIT_KIND_ANSWERED);
    expect(answered.map((r) => [r.toolCallId, r.selected])).toEqual([
      [ask, ["SQLite"]],
      [second, []],
    ]);
  });
});

describe("AskUser answers on a multi-select question", () => {
  it("refuse an option chosen twice over Chat, Send and Reply, naming the repeat, and store nothing", async () => {
    const checks = {
      question: "Which checks should run?",
      header: "Checks",
      multi_select: true,
      options: [
        { label: "lint", description: "ESLint and Prettier" },
        { label: "test", description: "The unit tests" },
        { label: "build", description: "A full build" },
      ],
    };
    h = await startHarness({
      turns: [
        { toolCalls: [{ name: "AskUser", input: { questions: [checks] } }] },
        { text: "Running them." },
      ],
    });
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const parked = await collect(chat.message("check the code"));
    expect(parked.map(kind).at(-1)).toBe("reply_parked");
    const [ask] = startedCalls(parked);
    const before = await h.client.getSession(session.id);

    const repeated = [
      { selected: ["lint", "lint"], field: "selected[1]" },
      { selected: ["test", "lint", "test"], field: "selected[2]" },
    ];
    for (const { selected, field } of repeated) {
      const answer = { question: checks.question, selected };
      // As metadata, and as the typed ask_user field.
      const inMetadata = result(ask!, { answers: [answer] });
      const typed = result(ask!, {});
      typed.value.executionResults[0]!.askUser = { answers: [answer] };
      const refusals = [
        await refusal(chat.send(inMetadata)),
        await refusal(h.client.send(session.id, typed)),
        await refusal(h.client.reply({ sessionId: session.id, input: inMetadata })),
      ];
      for (const err of refusals) {
        const shown = `${JSON.stringify(selected)}: ${err.codeName} ${err.message}`;
        expect(err.codeName, shown).toBe("INVALID_ARGUMENT");
        expect(err.fieldViolations, shown).toEqual([
          {
            field: `external_execution_result.execution_results[0].ask_user.answers[0].${field}`,
            description: `option ${JSON.stringify(selected.at(-1))} is already chosen; name each option once`,
          },
        ]);
      }
    }
    // Nothing stored: still parked on the same call, no answer audited, the model not called.
    const after = await h.client.getSession(session.id);
    expect(after.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_EXTERNAL_RESULT);
    expect(after.lastSeq).toBe(before.lastSeq);
    expect(after.pendingToolCalls.map((c) => c.id)).toEqual([ask]);
    const { records } = await h.client.listAuditRecords({ sessionId: session.id });
    expect(records.filter((r) => r.kind === AuditKind.AUDIT_KIND_ANSWERED)).toEqual([]);
    expect(h.model.requests).toHaveLength(1);

    // Each option once is taken, and the model reads each once.
    await chat.send(
      result(ask!, { answers: [{ question: checks.question, selected: ["test", "lint"] }] }),
    );
    const done = await collect(chat.untilSettled());
    chat.close();
    expect(done.map(kind).at(-1)).toBe("reply_end");
    const end = done.find((e) => e.event?.$case === "toolResultEnd");
    expect(end?.event?.$case === "toolResultEnd" && end.event.value.askUser?.answers).toEqual([
      { question: checks.question, selected: ["test", "lint"] },
    ]);
    const told = h.model.requests[1]!.messages.find((m) => m.role === "tool");
    expect(JSON.stringify(told)).toContain("Which checks should run? → test; lint");
  });
});
