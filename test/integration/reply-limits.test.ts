import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createParkwayClient,
  type ParkwayClient,
  type ParkwayClientError,
} from "../../src/client/index.js";
import { parseConfig } from "../../src/config/index.js";
import {
  ReplyResponse,
  Session,
  SessionStatus,
} from "../../src/generated/parkway/v1/agent_service.js";
import { status } from "@grpc/grpc-js";
import { FinishedReason } from "../../src/generated/parkway/v1/content.js";
import { PermissionMode } from "../../src/generated/parkway/v1/permission.js";
import { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import {
  type Script,
  startScriptedModel,
  type ScriptedModelServer,
} from "../../src/model/scripted/index.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";
import { captureLog } from "../helpers/capture-log.js";
import { collect, kind } from "../helpers/parkway-harness.js";

/**
 * A reply's message is bounded by `agents[].maxReplyBytes` (default 1.5 MiB): past it the model's
 * output is cut, a marker says so, and the reply ends with ERROR `reply_too_large`. Here the model
 * sends several times gRPC's default 4 MiB receive limit, and every client below keeps that default
 * limit: every call that returns the reply, the session or its events must still be received,
 * also after a restart from the store.
 */
const KIB = 1024;
const CLIENT_LIMIT = 4 * 1024 * KIB;
const MARKER = "[truncated: this reply passed";

/** The scripted model and a real server on one data directory, restartable. */
interface Rig {
  model: ScriptedModelServer;
  parkway: RunningParkway;
  client: ParkwayClient;
  restart(): Promise<void>;
  close(): Promise<void>;
}

async function startRig(script: Script): Promise<Rig> {
  const root = await mkdtemp(path.join(tmpdir(), "parkway-bounds-"));
  const model = await startScriptedModel({ script });
  const start = () =>
    startParkway({
      config: parseConfig({
        listen: "127.0.0.1:0",
        data: path.join(root, "data"),
        agents: [{ id: "test", workingDirectories: [path.join(root, "work")] }],
        model: { url: model.url, name: "scripted", maxRetries: 0 },
      }),
      log: captureLog(),
    });
  const rig: Rig = {
    model,
    parkway: await start(),
    client: undefined as never,
    async restart() {
      rig.client.close();
      await rig.parkway.close();
      rig.parkway = await start();
      rig.client = createParkwayClient(rig.parkway.address);
    },
    async close() {
      rig.client.close();
      await rig.parkway.close();
      await model.close();
    },
  };
  rig.client = createParkwayClient(rig.parkway.address);
  return rig;
}

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const ticketTool = {
  name: "OpenTicket",
  description: "Opens a ticket in the client's tracker.",
  inputSchema: JSON.stringify({ type: "object", properties: { body: { type: "string" } } }),
  metadataSchema: "",
};

/** Every stored event of the session, replayed from seq 0 on a new stream. */
async function replayAll(client: ParkwayClient, sessionId: string): Promise<ServerEvent[]> {
  const { lastSeq } = await client.getSession(sessionId);
  const chat = await client.attach(sessionId, { afterSeq: 0 });
  const out: ServerEvent[] = [];
  for await (const event of chat) {
    out.push(event);
    if (event.seq >= lastSeq) break;
  }
  chat.close();
  return out;
}

const largest = (events: ServerEvent[]): number =>
  Math.max(...events.map((e) => ServerEvent.encode(e).finish().length));

/** Reads the stream until the reply ends or parks again, and returns that event. */
async function untilSettled(chat: AsyncIterable<ServerEvent>) {
  for await (const event of chat) {
    const payload = event.event;
    if (payload?.$case === "replyEnd" || payload?.$case === "replyParked") return payload;
  }
  throw new Error("the stream ended before the reply settled");
}

/** Reads the stream until REPLY_END and returns it. */
async function untilEnd(chat: AsyncIterable<ServerEvent>) {
  for await (const event of chat) {
    if (event.event?.$case === "replyEnd") return event.event.value;
  }
  throw new Error("the stream ended before REPLY_END");
}

const textOf = (events: ServerEvent[]): string =>
  events.map((e) => (e.event?.$case === "textBlockDelta" ? e.event.value.delta : "")).join("");

describe("reply limits", () => {
  it("cuts a reply of many text deltas and large tool calls at maxReplyBytes, and every call still receives it, also after a restart", async () => {
    // 1 MB of text in 16 KiB deltas, then four 600 KB inputs: 3.4 MB, over twice the bound.
    rig = await startRig({
      turns: [
        {
          text: "t".repeat(1000 * 1000),
          toolCalls: [1, 2, 3, 4].map((n) => ({
            id: `call_${n}`,
            name: "OpenTicket",
            input: { body: String(n).repeat(600 * 1000) },
          })),
          chunkSize: 16 * KIB,
        },
        { text: "I will keep it shorter." },
      ],
    });
    const { client } = rig;
    const session = await client.createSession({ agentId: "test", externalTools: [ticketTool] });

    const response = await client.reply({
      sessionId: session.id,
      input: { $case: "userMessage", value: { text: "write a lot", content: [] } },
    });
    const size = ReplyResponse.encode(response).finish().length;
    expect(size).toBeLessThan(CLIENT_LIMIT);
    const message = response.message!;
    expect(message.finishedReason).toBe(FinishedReason.FINISHED_REASON_ERROR);
    expect(message.error?.code).toBe("reply_too_large");
    expect(response.status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    expect(response.pendingToolCalls).toEqual([]);
    const texts = message.content.flatMap((b) =>
      b.block?.$case === "text" ? [b.block.value.text] : [],
    );
    expect(texts[0]).toBe("t".repeat(1000 * 1000));
    expect(texts.at(-1)).toContain(`${MARKER} ${1536 * KIB} bytes`);
    // The cut step's calls are dropped, never run or parked.
    expect(message.content.some((b) => b.block?.$case === "toolCall")).toBe(false);

    const check = async () => {
      const events = await replayAll(rig!.client, session.id);
      const end = events.find((e) => e.event?.$case === "replyEnd");
      expect(end?.event?.$case === "replyEnd" && end.event.value.error?.code).toBe(
        "reply_too_large",
      );
      expect(textOf(events)).toContain(MARKER);
      expect(events.some((e) => kind(e) === "require_external_execution")).toBe(false);
      expect(largest(events)).toBeLessThan(CLIENT_LIMIT);
      const state = await rig!.client.getSession(session.id);
      expect(state.status).toBe(SessionStatus.SESSION_STATUS_IDLE);
      expect(Session.encode(state).finish().length).toBeLessThan(CLIENT_LIMIT);
      return events;
    };
    const before = await check();
    await rig.restart();
    const after = await check();
    expect(after.map((e) => e.seq)).toEqual(before.map((e) => e.seq));

    // The model reads the marker in the next reply's history.
    const { lastSeq } = await rig.client.getSession(session.id);
    const chat = await rig.client.attach(session.id, { afterSeq: lastSeq });
    const next = await collect(chat.message("shorter please"));
    chat.close();
    expect(next.every((e) => !e.replayed)).toBe(true);
    expect(kind(next.at(-1)!)).toBe("reply_end");
    expect(rig.model.requests).toHaveLength(2);
    const history = JSON.stringify(rig.model.requests.at(-1)?.messages);
    expect(history).toContain(MARKER);
  });

  it("parks several large calls near the bound: Reply, GetSession and replays are received, after a restart too, and a result past the bound is refused", async () => {
    // Three 480 KB inputs: 1.44 MB, just under the 1.5 MiB bound; Reply carries them twice.
    const calls = [1, 2, 3].map((n) => ({
      id: `call_${n}`,
      name: "OpenTicket",
      input: { body: String(n).repeat(480 * 1000) },
    }));
    rig = await startRig({
      turns: [{ toolCalls: calls, chunkSize: 64 * KIB }, { text: "Tickets opened." }],
    });
    const session = await rig.client.createSession({
      agentId: "test",
      externalTools: [ticketTool],
      permissionMode: PermissionMode.PERMISSION_MODE_BYPASS,
    });
    const parked = await rig.client.reply({
      sessionId: session.id,
      input: { $case: "userMessage", value: { text: "open three", content: [] } },
    });
    const size = ReplyResponse.encode(parked).finish().length;
    expect(size).toBeGreaterThan(2 * 3 * 480 * 1000);
    expect(size).toBeLessThan(CLIENT_LIMIT);
    expect(parked.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_EXTERNAL_RESULT);
    const ids = parked.pendingToolCalls.map((c) => c.id);
    expect(new Set(ids).size).toBe(3);

    await rig.restart();
    const state = await rig.client.getSession(session.id);
    expect(state.pendingToolCalls.map((c) => c.id)).toEqual(ids);
    const events = await replayAll(rig.client, session.id);
    const announced = events.flatMap((e) =>
      e.event?.$case === "requireExternalExecution" ? e.event.value.toolCalls : [],
    );
    expect(announced.map((c) => c.id)).toEqual(ids);
    expect(largest(events)).toBeLessThan(CLIENT_LIMIT);

    // A result that would pass the bound is refused, naming it; nothing changes.
    const chat = await rig.client.attach(session.id, { afterSeq: state.lastSeq });
    const pending = state.pendingToolCalls;
    const big = chat.submitResult(pending[0]!, {
      state: "success",
      output: "r".repeat(400 * 1000),
    });
    const refused = (await big.catch((err: unknown) => err)) as ParkwayClientError;
    expect(refused.code).toBe(status.INVALID_ARGUMENT);
    expect(refused.fieldViolations[0]?.field).toBe(
      "external_execution_result.execution_results[0]",
    );
    expect(refused.fieldViolations[0]?.description).toMatch(/over the agent's maxReplyBytes/);
    expect((await rig.client.getSession(session.id)).pendingToolCalls).toHaveLength(3);

    let end: Awaited<ReturnType<typeof untilSettled>> | undefined;
    for (const call of pending) {
      await chat.submitResult(call, { state: "success", output: `opened ${call.id}` });
      end = await untilSettled(chat);
    }
    chat.close();
    expect(end?.$case === "replyEnd" && end.value.finishedReason).toBe(
      FinishedReason.FINISHED_REASON_COMPLETED,
    );
  });

  it("lets an AskUser near the bound park and be answered, after a restart", async () => {
    // 280 KB counts five times (as JSON and typed, and kept for the answer, which repeats it).
    const question = "q".repeat(280 * 1000);
    const options = [
      { label: "a", description: "first" },
      { label: "b", description: "second" },
    ];
    rig = await startRig({
      turns: [
        {
          toolCalls: [
            {
              id: "ask_1",
              name: "AskUser",
              input: { questions: [{ question, header: "Big", options }] },
            },
          ],
          chunkSize: 64 * KIB,
        },
        { text: "Thanks." },
      ],
    });
    const session = await rig.client.createSession({ agentId: "test" });
    const chat = await rig.client.attach(session.id);
    const events = await collect(chat.message("ask me"));
    chat.close();
    expect(kind(events.at(-1)!)).toBe("reply_parked");

    await rig.restart();
    const state = await rig.client.getSession(session.id);
    const pending = state.pendingToolCalls[0]!;
    expect(pending.askUser?.questions[0]?.question).toBe(question);
    const again = await rig.client.attach(session.id, { afterSeq: state.lastSeq });
    await again.answer(pending, { [question]: "a" });
    const end = await untilEnd(again);
    again.close();
    expect(end.finishedReason).toBe(FinishedReason.FINISHED_REASON_COMPLETED);
    const replayed = await replayAll(rig.client, session.id);
    expect(largest(replayed)).toBeLessThan(CLIENT_LIMIT);
  });

  it("cuts a second AskUser that would pass the bound: nothing parks, the marker is shown", async () => {
    const ask = (n: number) => ({
      id: `ask_${n}`,
      name: "AskUser",
      input: {
        questions: [
          { question: `${n}`.repeat(280 * 1000), header: "Big", options: [{ label: "a" }] },
        ],
      },
    });
    rig = await startRig({ turns: [{ toolCalls: [ask(1), ask(2)], chunkSize: 64 * KIB }] });
    const session = await rig.client.createSession({ agentId: "test" });
    const chat = await rig.client.attach(session.id);
    const events = await collect(chat.message("ask twice"));
    chat.close();
    expect(events.some((e) => kind(e) === "require_external_execution")).toBe(false);
    expect(events.some((e) => kind(e) === "reply_parked")).toBe(false);
    expect(textOf(events)).toContain(MARKER);
    const end = events.at(-1)!;
    expect(end.event?.$case === "replyEnd" && end.event.value.error?.code).toBe("reply_too_large");
    const state = await rig.client.getSession(session.id);
    expect(state.pendingToolCalls).toEqual([]);
    expect(largest(await replayAll(rig.client, session.id))).toBeLessThan(CLIENT_LIMIT);
  });
});
