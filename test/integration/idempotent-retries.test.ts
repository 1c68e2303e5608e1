import path from "node:path";
import { writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import {
  createParkwayClient,
  type ParkwayClient,
  type ParkwayClientError,
} from "../../src/client/index.js";
import {
  type ReplyRequest,
  type ReplyResponse,
  SessionStatus,
} from "../../src/generated/parkway/v1/agent_service.js";
import { FinishedReason } from "../../src/generated/parkway/v1/content.js";
import { startScriptedModel, type Script } from "../../src/model/scripted/index.js";
import { RequestOrderRecord, RequestRecord } from "../../src/session/records.js";
import { collect, type Harness, startHarness } from "../helpers/parkway-harness.js";
import { type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";
import { confirmInput } from "../helpers/confirm-input.js";

let h: Harness | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** An input that both Chat and Reply take. */
type Input = NonNullable<ReplyRequest["input"]>;

const message = (text: string): Input => ({ $case: "userMessage", value: { text, content: [] } });

const confirm = (id: string, confirmed = true): Input => confirmInput(id, confirmed);

const result = (id: string, text: string): Input => ({
  $case: "externalExecutionResult",
  value: {
    replyId: "",
    executionResults: [
      {
        id,
        name: "",
        output: [{ block: { $case: "text", value: { id: "", text } } }],
        state: 1,
        metadata: undefined,
        askUser: undefined,
      },
    ],
  },
});

/** Deploy is an external tool that asks first: a message parks for a confirmation, then a result. */
const deployAgent = {
  externalTools: [
    {
      name: "Deploy",
      description: "Deploys.",
      inputSchema: { type: "object", properties: { target: { type: "string" } } },
    },
  ],
};

const deployScript: Script = {
  turns: [
    {
      match: { lastUser: "" },
      repeat: true,
      toolCalls: [{ name: "Deploy", input: { target: "prod" } }],
    },
    { match: { toolName: "Deploy" }, repeat: true, text: "deployed" },
  ],
};

const text = (res: ReplyResponse) =>
  (res.message?.content ?? [])
    .map((b) => (b.block?.$case === "text" ? b.block.value.text : ""))
    .join("");

/** What a refusal must look like: INVALID_ARGUMENT naming request_id and the id itself. */
function expectReused(err: unknown, requestId: string): void {
  const e = err as ParkwayClientError;
  expect(e.codeName).toBe("INVALID_ARGUMENT");
  expect(e.fieldViolations.map((v) => v.field)).toEqual(["request_id"]);
  expect(e.message).toContain(requestId);
}

async function refused(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("the input was accepted");
}

describe("a retried Reply", () => {
  it("returns the first outcome of each input, not the session's state now, and applies nothing twice", async () => {
    h = await startHarness(deployScript, deployAgent);
    const { client } = h;
    const session = await client.createSession({ agentId: "test" });
    const sessionId = session.id;

    const parked = await client.reply({ sessionId, requestId: "m1", input: message("deploy") });
    expect(parked.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    expect(parked.message?.finishedReason).toBe(FinishedReason.FINISHED_REASON_UNSPECIFIED);
    const callId = parked.pendingToolCalls[0]!.id;

    const handedOut = await client.reply({ sessionId, requestId: "c1", input: confirm(callId) });
    expect(handedOut.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_EXTERNAL_RESULT);
    expect(handedOut.pendingToolCalls.map((c) => c.id)).toEqual([callId]);

    const done = await client.reply({ sessionId, requestId: "r1", input: result(callId, "ok") });
    expect(done.status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    expect(done.message?.finishedReason).toBe(FinishedReason.FINISHED_REASON_COMPLETED);
    expect(text(done)).toBe("deployed");

    const before = await client.getSession(sessionId);
    const storeBefore = await h.parkway.store.digest();
    const modelCalls = h.model.requests.length;
    // Each retry gets exactly the response its first call got, whatever the session did since.
    expect(await client.reply({ sessionId, requestId: "m1", input: message("deploy") })).toEqual(
      parked,
    );
    expect(await client.reply({ sessionId, requestId: "c1", input: confirm(callId) })).toEqual(
      handedOut,
    );
    expect(await client.reply({ sessionId, requestId: "r1", input: result(callId, "ok") })).toEqual(
      done,
    );
    expect(await client.getSession(sessionId)).toEqual(before);
    expect(await h.parkway.store.digest()).toBe(storeBefore);
    expect(h.model.requests).toHaveLength(modelCalls);
  });

  it("returns the outcome of an input first sent on a Chat stream, and of an interrupt", async () => {
    h = await startHarness(deployScript, deployAgent);
    const { client } = h;
    const session = await client.createSession({ agentId: "test" });
    const sessionId = session.id;
    const chat = await client.attach(sessionId);
    await chat.send(message("deploy"), "chat-1");
    const events = await collect(chat.untilSettled());
    const parkedEvent = events.find((e) => e.event?.$case === "replyParked");
    expect(parkedEvent).toBeDefined();
    chat.close();

    const retried = await client.reply({
      sessionId,
      requestId: "chat-1",
      input: message("deploy"),
    });
    expect(retried.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    expect(retried.message?.id).toBe(parkedEvent!.replyId);
    expect(retried.message?.finishedReason).toBe(FinishedReason.FINISHED_REASON_UNSPECIFIED);

    const stopped = await client.reply({
      sessionId,
      requestId: "stop-1",
      input: { $case: "userInterrupt", value: { replyId: "" } },
    });
    expect(stopped.message?.finishedReason).toBe(FinishedReason.FINISHED_REASON_INTERRUPTED);
    expect(stopped.status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    const next = await client.reply({ sessionId, requestId: "m2", input: message("again") });
    expect(next.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    expect(
      await client.reply({
        sessionId,
        requestId: "stop-1",
        input: { $case: "userInterrupt", value: { replyId: "" } },
      }),
    ).toEqual(stopped);
    expect((await client.getSession(sessionId)).status).toBe(
      SessionStatus.SESSION_STATUS_AWAITING_PERMISSION,
    );
  });
});

describe("a request_id reused for a different input", () => {
  it("is refused with INVALID_ARGUMENT naming it, on Chat and on Reply, and nothing changes", async () => {
    h = await startHarness(deployScript, deployAgent);
    const { client } = h;
    const session = await client.createSession({ agentId: "test" });
    const sessionId = session.id;
    const chat = await client.attach(sessionId);
    await chat.send(message("deploy"), "in-1");
    await collect(chat.untilSettled());
    const callId = (await client.getSession(sessionId)).pendingToolCalls[0]!.id;
    await chat.send(confirm(callId), "in-2");
    await collect(chat.untilSettled());

    const before = await client.getSession(sessionId);
    const storeBefore = await h.parkway.store.digest();
    const modelCalls = h.model.requests.length;
    const unchanged = async () => {
      expect(await client.getSession(sessionId)).toEqual(before);
      expect(await h!.parkway.store.digest()).toBe(storeBefore);
      expect(h!.model.requests).toHaveLength(modelCalls);
    };

    // Another text, another kind, another call id, another answer, another payload.
    const reuses: [string, Input][] = [
      ["in-1", message("deploy to staging")],
      ["in-1", { $case: "userInterrupt", value: { replyId: "" } }],
      ["in-2", confirm("call_unknown")],
      ["in-2", confirm(callId, false)],
      ["in-2", result(callId, "ok")],
    ];
    for (const [requestId, input] of reuses) {
      expectReused(await refused(chat.send(input, requestId)), requestId);
      await unchanged();
      expectReused(await refused(client.reply({ sessionId, requestId, input })), requestId);
      await unchanged();
    }
    // The same input with the same id is still a harmless repeat.
    await chat.send(confirm(callId), "in-2");
    await unchanged();
    chat.close();

    // A result is then applied once, and its id is as firmly bound to it.
    const done = await client.reply({ sessionId, requestId: "in-3", input: result(callId, "ok") });
    expect(text(done)).toBe("deployed");
    expectReused(
      await refused(
        client.reply({ sessionId, requestId: "in-3", input: result(callId, "failed") }),
      ),
      "in-3",
    );
  });

  it("refuses a request_id longer than 256 characters, naming the field", async () => {
    h = await startHarness(deployScript, deployAgent);
    const session = await h.client.createSession({ agentId: "test" });
    const err = (await refused(
      h.client.reply({ sessionId: session.id, requestId: "x".repeat(257), input: message("hi") }),
    )) as ParkwayClientError;
    expect(err.codeName).toBe("INVALID_ARGUMENT");
    expect(err.fieldViolations.map((v) => v.field)).toEqual(["request_id"]);
    expect((await h.client.getSession(session.id)).lastSeq).toBe(0);
  });
});

describe("remembered request ids", () => {
  it("are bounded per session by count and by time, and go with their session", async () => {
    h = await startHarness(
      { turns: [{ match: { lastUser: "" }, repeat: true, text: "hello" }] },
      {},
      { retention: { requestIdsPerSession: 3, requestIdTtl: 60_000 } },
    );
    const { client, parkway } = h;
    const session = await client.createSession({ agentId: "test" });
    const sessionId = session.id;
    const stored = async () => {
      const keys: string[] = [];
      for await (const key of parkway.store.keys(RequestRecord)) keys.push(key);
      const orders: string[] = [];
      for await (const key of parkway.store.keys(RequestOrderRecord)) orders.push(key);
      expect(orders).toHaveLength(keys.length);
      return keys.map((k) => k.slice(k.indexOf("/") + 1)).sort();
    };
    for (let i = 1; i <= 5; i++) {
      await client.reply({ sessionId, requestId: `m${i}`, input: message(`message ${i}`) });
    }
    expect(await stored()).toEqual(["m3", "m4", "m5"]);
    // A forgotten id is new again; a remembered one still answers with its first outcome.
    const lastSeq = (await client.getSession(sessionId)).lastSeq;
    expect(
      text(await client.reply({ sessionId, requestId: "m5", input: message("message 5") })),
    ).toBe("hello");
    expect((await client.getSession(sessionId)).lastSeq).toBe(lastSeq);
    await client.reply({ sessionId, requestId: "m1", input: message("something else") });
    expect((await client.getSession(sessionId)).lastSeq).toBeGreaterThan(lastSeq);
    expect(await stored()).toEqual(["m1", "m4", "m5"]);

    await client.deleteSession(sessionId);
    expect(await stored()).toEqual([]);
  });

  it("are forgotten after requestIdTtl", async () => {
    h = await startHarness(
      { turns: [{ match: { lastUser: "" }, repeat: true, text: "hello" }] },
      {},
      { retention: { requestIdTtl: "50ms" } },
    );
    const { client } = h;
    const session = await client.createSession({ agentId: "test" });
    const sessionId = session.id;
    await client.reply({ sessionId, requestId: "m1", input: message("once") });
    const lastSeq = (await client.getSession(sessionId)).lastSeq;
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Past its time the id is new: another input with it is applied.
    await client.reply({ sessionId, requestId: "m1", input: message("twice") });
    expect((await client.getSession(sessionId)).lastSeq).toBeGreaterThan(lastSeq);
    expect(h.model.requests).toHaveLength(2);
  });
});

describe("retries across a restart", () => {
  it("return the first outcome after SIGKILL, for inputs sent on Reply and on Chat", async () => {
    const root = await tempDir("parkway-retries-");
    const model = await startScriptedModel({ script: deployScript });
    cleanups.push(() => model.close());
    const config = path.join(root, "parkway.json");
    await writeFile(
      config,
      JSON.stringify({
        model: { url: model.url, name: "scripted", maxRetries: 0 },
        agents: [{ id: "test", workingDirectories: [path.join(root, "work")], ...deployAgent }],
      }),
    );
    const dataDir = path.join(root, "data");
    let server: SpawnedServer = await spawnServer({ dataDir, args: ["--config", config] });
    let client: ParkwayClient = createParkwayClient(server.address);
    cleanups.push(async () => {
      client.close();
      await server.stop();
    });
    const kill = async () => {
      client.close();
      process.kill(-server.child.pid!, "SIGKILL");
      await new Promise((resolve) => server.child.once("exit", resolve));
      server = await spawnServer({ dataDir, args: ["--config", config] });
      client = createParkwayClient(server.address);
    };

    const session = await client.createSession({ agentId: "test" });
    const sessionId = session.id;
    const parked = await client.reply({ sessionId, requestId: "m1", input: message("deploy") });
    const callId = parked.pendingToolCalls[0]!.id;
    const handedOut = await client.reply({ sessionId, requestId: "c1", input: confirm(callId) });
    expect(handedOut.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_EXTERNAL_RESULT);

    await kill();
    expect(await client.reply({ sessionId, requestId: "m1", input: message("deploy") })).toEqual(
      parked,
    );
    expect(await client.reply({ sessionId, requestId: "c1", input: confirm(callId) })).toEqual(
      handedOut,
    );
    expectReused(
      await refused(client.reply({ sessionId, requestId: "c1", input: confirm(callId, false) })),
      "c1",
    );
    const chat = await client.attach(sessionId, {
      afterSeq: (await client.getSession(sessionId)).lastSeq,
    });
    await chat.send(result(callId, "ok"), "r1");
    await collect(chat.untilSettled());
    chat.close();
    const after = await client.getSession(sessionId);
    expect(after.status).toBe(SessionStatus.SESSION_STATUS_IDLE);

    await kill();
    const done = await client.reply({ sessionId, requestId: "r1", input: result(callId, "ok") });
    expect(done.message?.finishedReason).toBe(FinishedReason.FINISHED_REASON_COMPLETED);
    expect(text(done)).toBe("deployed");
    expect(await client.getSession(sessionId)).toEqual(after);
    expect(model.requests).toHaveLength(2);
  }, 60_000);
});
