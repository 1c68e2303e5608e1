import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ParkwayClient, ParkwayClientError } from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import {
  collect,
  type Harness,
  kind,
  startedCalls,
  startHarness,
  toolResult,
} from "../helpers/parkway-harness.js";
import { type ProcessHarness, startProcessHarness } from "../helpers/process-harness.js";
import { REPO_ROOT } from "../helpers/spawn-server.js";

/** The reference "everything" server: its trigger-elicitation-request tool sends a form of a dozen fields. */
const EVERYTHING = path.join(
  REPO_ROOT,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
const FORM_TOOL = "mcp__everything__trigger-elicitation-request";
const everything = {
  command: process.execPath,
  args: [EVERYTHING, "stdio"],
  env: { PARKWAY_TEST_FILE: process.env.PARKWAY_TEST_FILE ?? "" },
};
const TURNS = [
  { match: { lastUser: "form" }, toolCalls: [{ name: FORM_TOOL, input: {} }], repeat: true },
  { match: { toolName: FORM_TOOL }, text: "thanks", repeat: true },
];

let h: Harness | undefined;
let p: ProcessHarness | undefined;
afterEach(async () => {
  await h?.close();
  await p?.close();
  h = undefined;
  p = undefined;
});

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`no ${what}`);
  return value;
}

const calls = (events: ServerEvent[], $case: "requireUserConfirm" | "requireExternalExecution") =>
  events.flatMap((e) => (e.event?.$case === $case ? e.event.value.toolCalls : []));

/** Starts a reply that calls the form tool, approves the call, and returns the question. */
async function askForm(chat: Awaited<ReturnType<ParkwayClient["attach"]>>) {
  const first = await collect(chat.message("form"));
  const [callId] = startedCalls(first);
  await chat.confirm(required(calls(first, "requireUserConfirm")[0], "confirmation"));
  const asked = await collect(chat.untilSettled());
  expect(asked.map(kind).slice(-2)).toEqual(["require_external_execution", "reply_parked"]);
  const question = required(calls(asked, "requireExternalExecution")[0], "question");
  return { callId: required(callId, "call"), question, events: [...first, ...asked] };
}

/** The "Raw result" JSON the everything server puts into its answer. */
function rawResult(text: string): { action: string; content?: Record<string, unknown> } {
  const raw = text.slice(text.indexOf("Raw result:") + "Raw result:".length);
  return JSON.parse(raw) as { action: string; content?: Record<string, unknown> };
}

describe("an MCP server's form (elicitation)", () => {
  it("parks the reply as an AskUser asked by the call; the checked answers go back to the server", async () => {
    h = await startHarness({ turns: TURNS }, { mcpServers: { everything } });
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const { callId, question } = await askForm(chat);

    expect(question.name).toBe("AskUser");
    expect(question.askedBy).toBe(callId);
    const form = required(question.askUser, "typed question");
    expect(form.message).toBe("Please provide inputs for the following fields:");
    // One question per field of the form, in its order.
    expect(form.questions.slice(0, 3).map((q) => q.question)).toEqual([
      "String",
      "Boolean",
      "String with default",
    ]);
    const byText = new Map(form.questions.map((q) => [q.question, q]));
    expect(byText.get("String")).toMatchObject({ answerFormat: "text", options: [] });
    expect(byText.get("String")?.maySkip).toBeUndefined();
    expect(byText.get("Integer")).toMatchObject({ answerFormat: "integer", maySkip: true });
    expect(byText.get("Boolean")?.options.map((o) => o.label)).toEqual(["Yes", "No"]);
    expect(byText.get("Untitled Single Select Enum")?.options).toHaveLength(6);
    expect(byText.get("Titled Multiple Select Enum")).toMatchObject({ multiSelect: true });
    expect(byText.get("Titled Single Select Enum")?.options[2]).toMatchObject({
      label: "Wonder Woman",
      description: "hero-3",
    });

    // Parked: the session awaits an external result, and a stream that attaches now is told.
    const parked = await h.client.getSession(session.id);
    expect(parked.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_EXTERNAL_RESULT);
    expect(parked.pendingToolCalls.map((c) => c.id)).toEqual([question.id]);
    const late = await h.client.attach(session.id, { afterSeq: parked.lastSeq });
    const announced = await late.next();
    expect(announced?.event?.$case).toBe("requireExternalExecution");
    late.close();

    // Answers the form cannot take are refused, naming the answer; nothing changes.
    const refused = await chat
      .answer(question, {
        String: { other: "Ada Lovelace" },
        Integer: { other: "many" },
        "String with email format": { other: "not an email" },
      })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refused).toBeInstanceOf(ParkwayClientError);
    const error = refused as ParkwayClientError;
    expect(error.codeName).toBe("INVALID_ARGUMENT");
    expect(error.fieldViolations).toEqual([
      {
        field: "external_execution_result.execution_results[0].ask_user.answers[1]",
        description: "must be a whole number",
      },
      {
        field: "external_execution_result.execution_results[0].ask_user.answers[2]",
        description: expect.stringContaining("email") as unknown,
      },
    ]);
    expect((await h.client.getSession(session.id)).status).toBe(
      SessionStatus.SESSION_STATUS_AWAITING_EXTERNAL_RESULT,
    );

    // A question is answered with a result, never confirmed.
    const confirmed = await chat.confirm(question).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((confirmed as ParkwayClientError).codeName).toBe("FAILED_PRECONDITION");

    await chat.answer(question, {
      String: { other: "Ada Lovelace" },
      Boolean: "Yes",
      Integer: { other: "7" },
      "String with email format": { other: "ada@example.com" },
      "Titled Single Select Enum": "Wonder Woman",
      "Untitled Multiple Select Enum": ["Piano", "Drums"],
    });
    const after = await collect(chat.untilSettled());
    chat.close();
    const result = toolResult(after, callId);
    expect(result.state).toBe(ToolResultState.TOOL_RESULT_STATE_SUCCESS);
    expect(rawResult(result.text)).toEqual({
      action: "accept",
      content: {
        name: "Ada Lovelace",
        check: true,
        integer: 7,
        email: "ada@example.com",
        titledSingleSelectEnum: "hero-3",
        untitledMultipleSelectEnum: ["Piano", "Drums"],
      },
    });
    const end = after.findLast((e) => e.event?.$case === "replyEnd");
    expect(end?.event?.$case === "replyEnd" && end.event.value.finishedReason).toBe(1);
    // The model read the tool's result, never the question the server asked.
    const request = JSON.stringify(h.model.requests.at(-1)?.messages);
    expect(request).toContain("Ada Lovelace");
    expect(request).not.toContain("AskUser");
  });

  it("maps a denial to decline and an error result to cancel", async () => {
    h = await startHarness({ turns: TURNS }, { mcpServers: { everything } });
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    for (const [state, action] of [
      ["denied", "decline"],
      ["error", "cancel"],
    ] as const) {
      const { callId, question } = await askForm(chat);
      await chat.submitResult(question, { output: "no", state });
      const after = await collect(chat.untilSettled());
      expect(rawResult(toolResult(after, callId).text)).toEqual({ action });
      expect(toolResult(after, question.id).state).toBe(
        state === "denied"
          ? ToolResultState.TOOL_RESULT_STATE_DENIED
          : ToolResultState.TOOL_RESULT_STATE_ERROR,
      );
    }
    chat.close();
  });

  it("an interrupt withdraws the question and cancels the call", async () => {
    h = await startHarness({ turns: TURNS }, { mcpServers: { everything } });
    const session = await h.client.createSession({ agentId: "test" });
    const chat = await h.client.attach(session.id);
    const { callId, question } = await askForm(chat);
    await chat.interrupt();
    const after = await collect(chat.untilSettled());
    chat.close();
    expect(toolResult(after, question.id).state).toBe(
      ToolResultState.TOOL_RESULT_STATE_INTERRUPTED,
    );
    expect(toolResult(after, callId).state).toBe(ToolResultState.TOOL_RESULT_STATE_INTERRUPTED);
    const end = after.findLast((e) => e.event?.$case === "replyEnd");
    expect(end?.event?.$case === "replyEnd" && end.event.value.finishedReason).toBe(2);
    expect((await h.client.getSession(session.id)).status).toBe(SessionStatus.SESSION_STATUS_IDLE);
  });

  it("after a SIGKILL while asked, the reply ends interrupted and the call is not sent again", async () => {
    p = await startProcessHarness(() => ({ mcpServers: { everything } }));
    await p.model.reset({ turns: TURNS });
    const client = p.client;
    const session = await client.createSession({ agentId: "test" });
    const chat = await client.attach(session.id);
    const { callId, question } = await askForm(chat);
    chat.close();
    await p.crash();
    const requestsBefore = p.model.requests.length;

    const ended = await client.getSession(session.id);
    expect(ended.status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    const replay = await client.attach(session.id);
    const events: ServerEvent[] = [];
    for (;;) {
      const e = await replay.next();
      if (!e) break;
      events.push(e);
      if (e.seq >= ended.lastSeq) break;
    }
    replay.close();
    const end = events.findLast((e) => e.event?.$case === "replyEnd");
    expect(end?.event?.$case === "replyEnd" && end.event.value).toMatchObject({
      finishedReason: 2,
      error: { code: "server_restarted" },
    });
    const interrupted = (id: string) => toolResult(events, id).state;
    expect(interrupted(callId)).toBe(ToolResultState.TOOL_RESULT_STATE_INTERRUPTED);
    expect(interrupted(question.id)).toBe(ToolResultState.TOOL_RESULT_STATE_INTERRUPTED);
    // Nothing was sent to the model or the server again.
    expect(p.model.requests.length).toBe(requestsBefore);
    const refused = await client
      .attach(session.id, { afterSeq: ended.lastSeq })
      .then((s) => s.submitResult(question, { output: "late" }).finally(() => s.close()))
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect((refused as ParkwayClientError).codeName).toBe("FAILED_PRECONDITION");
  });
});
