import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import {
  createParkwayClient,
  type ParkwayClient,
  ParkwayClientError,
  type ParkwaySession,
} from "../../src/client/index.js";
import { parseConfig } from "../../src/config/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { ToolCallState } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { PermissionMode } from "../../src/generated/parkway/v1/permission.js";
import {
  type Script,
  startScriptedModel,
  type ScriptedModelServer,
} from "../../src/model/scripted/index.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";
import { VISIBLE_AHEAD } from "../../src/session/seq-epoch.js";
import { captureLog } from "../helpers/capture-log.js";
import { healthCheck } from "../helpers/grpc-tools.js";
import { kind } from "../helpers/parkway-harness.js";
import { type WriteFaults, writeFaults } from "../helpers/store-faults.js";
import { confirmInput } from "../helpers/confirm-input.js";

/** A server in this process on a data directory that outlives it, so it can be started again. */
interface Node {
  parkway: RunningParkway;
  client: ParkwayClient;
  faults: WriteFaults;
  log: ReturnType<typeof captureLog>;
  close(): Promise<void>;
}

interface Setup {
  model: ScriptedModelServer;
  dataDir: string;
  workdir: string;
  agent: Record<string, unknown>;
}

let setup: Setup | undefined;
let node: Node | undefined;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

afterEach(async () => {
  process.off("unhandledRejection", onUnhandled);
  await node?.close();
  await setup?.model.close();
  node = undefined;
  setup = undefined;
});

async function prepare(script: Script, agent: Record<string, unknown> = {}): Promise<Setup> {
  unhandled.length = 0;
  process.on("unhandledRejection", onUnhandled);
  const root = await mkdtemp(path.join(tmpdir(), "parkway-storage-"));
  setup = {
    model: await startScriptedModel({ script }),
    dataDir: path.join(root, "data"),
    workdir: path.join(root, "work"),
    agent,
  };
  return setup;
}

async function launch(s: Setup): Promise<Node> {
  const log = captureLog();
  const parkway = await startParkway({
    config: parseConfig({
      listen: "127.0.0.1:0",
      data: s.dataDir,
      model: { url: s.model.url, name: "scripted", maxRetries: 0 },
      agents: [
        { id: "test", workingDirectories: [s.workdir], shareWorkingDirectories: true, ...s.agent },
      ] as never,
    }),
    log,
  });
  const client = createParkwayClient(parkway.address);
  let closed: Promise<void> | undefined;
  node = {
    parkway,
    client,
    faults: writeFaults(parkway.store),
    log,
    close() {
      closed ??= (async () => {
        client.close();
        await parkway.close();
      })();
      return closed;
    },
  };
  return node;
}

/** The error a call rejects with. */
async function refusal(call: Promise<unknown>): Promise<ParkwayClientError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ParkwayClientError))
    throw new Error(`expected a refusal, got ${String(err)}`);
  return err;
}

function expectStorageRefusal(err: ParkwayClientError): void {
  expect(err.codeName).toBe("UNAVAILABLE");
  expect(err.message).toContain(
    "storage failed (IO error: No space left on device); this server accepts no more writes and restarts",
  );
}

/** Reads a stream until it ends; returns its events and the error it ended with. */
async function drain(chat: ParkwaySession): Promise<{ events: ServerEvent[]; error?: unknown }> {
  const events: ServerEvent[] = [];
  try {
    for (;;) {
      const e = await chat.next(AbortSignal.timeout(15_000));
      if (!e) return { events };
      events.push(e);
    }
  } catch (error) {
    return { events, error };
  }
}

/** The errors logged, but the one line that reports the storage failure. */
function otherErrors(log: Node["log"]) {
  return log.entries.filter((e) => e.level === "error" && !e.msg?.startsWith("storage failed"));
}

function storageFailureLines(log: Node["log"]) {
  return log.entries.filter((e) => e.level === "error" && e.msg?.startsWith("storage failed"));
}

/** Every stored event of a session, from a fresh stream. */
async function history(client: ParkwayClient, sessionId: string): Promise<ServerEvent[]> {
  const chat = await client.attach(sessionId);
  const status = await client.getSession(sessionId);
  const events: ServerEvent[] = [];
  while (chat.lastSeq < status.lastSeq) {
    const e = await chat.next(AbortSignal.timeout(10_000));
    if (!e) break;
    if (e.seq !== 0) events.push(e);
  }
  chat.close();
  return events;
}

describe("a failed write stops the store (fail-stop)", () => {
  it("ends a running reply without an unhandled rejection; refuses every input; reads go on; a restart loses nothing", async () => {
    const marker = `sleep 31.${process.pid}`;
    const s = await prepare(
      {
        turns: [
          {
            match: { lastUser: "run it" },
            toolCalls: [
              {
                id: "slow",
                name: "Bash",
                input: {
                  command: `echo started >> runs.txt; echo started; sleep 1; echo more; ${marker}`,
                },
              },
            ],
          },
          { match: { lastUser: "hello again" }, text: "fresh reply" },
        ],
      },
      { permissionMode: "bypass" },
    );
    let n = await launch(s);
    const idle = await n.client.createSession({ agentId: "test" });
    const session = await n.client.createSession({ agentId: "test" });
    const other = await n.client.attach(idle.id, { reconnectForMs: 0 });
    const chat = await n.client.attach(session.id, { reconnectForMs: 0 });
    await chat.send({ $case: "userMessage", value: { text: "run it", content: [] } });
    for (;;) {
      const e = await chat.next(AbortSignal.timeout(10_000));
      if (e?.event?.$case === "toolResultTextDelta" && e.event.value.delta.includes("started"))
        break;
    }
    // The write of the next output ("more") fails.
    n.faults.failNext();
    const ended = await drain(chat);
    expect(ended.error).toBeInstanceOf(ParkwayClientError);
    expectStorageRefusal(ended.error as ParkwayClientError);
    await n.parkway.storageFailure;
    const callsAtFailure = n.faults.calls;

    expect(await healthCheck(n.parkway.address)).toBe("NOT_SERVING");
    expect(await healthCheck(n.parkway.address, "parkway.v1.AgentService")).toBe("NOT_SERVING");
    // The other stream ends with the failure too.
    const otherEnded = await drain(other);
    expectStorageRefusal(otherEnded.error as ParkwayClientError);

    // Reads answer what is stored: the session as the stream last saw it, no further.
    const seen = await n.client.getSession(session.id);
    expect(seen.lastSeq).toBe(chat.lastSeq);
    expect(seen.status).toBe(SessionStatus.SESSION_STATUS_RUNNING);
    expect((await n.client.listSessions()).sessions.map((x) => x.id).sort()).toEqual(
      [idle.id, session.id].sort(),
    );

    // Every input is refused, naming the failure.
    const userMessage = { $case: "userMessage" as const, value: { text: "hi", content: [] } };
    expectStorageRefusal(await refusal(n.client.reply({ sessionId: idle.id, input: userMessage })));
    expectStorageRefusal(await refusal(n.client.createSession({ agentId: "test" })));
    expectStorageRefusal(await refusal(n.client.attach(idle.id, { reconnectForMs: 0 })));
    expectStorageRefusal(
      await refusal(n.client.setMode(idle.id, PermissionMode.PERMISSION_MODE_BYPASS)),
    );
    expectStorageRefusal(
      await refusal(n.client.addRules([{ toolName: "Read", scope: 3, behavior: 1 }])),
    );
    expectStorageRefusal(await refusal(n.client.deleteSession(idle.id)));
    // Nothing was handed to LevelDB after the failed write.
    expect(n.faults.calls).toBe(callsAtFailure);

    // The running tool was stopped with its reply.
    await expect
      .poll(() => {
        try {
          return execFileSync("pgrep", ["-f", marker]).toString();
        } catch {
          return "";
        }
      })
      .toBe("");
    expect(storageFailureLines(n.log)).toHaveLength(1);
    expect(storageFailureLines(n.log)[0]!.obj).toMatchObject({
      err: { code: "LEVEL_IO_ERROR" },
      data: s.dataDir,
    });
    expect(otherErrors(n.log)).toEqual([]);
    await n.close();
    expect(unhandled).toEqual([]);

    // Started again on the same data: the reply that was running ends as interrupted, once.
    n = await launch(s);
    const events = await history(n.client, session.id);
    // The reply was running when the store failed: what ends it skips past seqs that may have
    // been seen, once, and goes on one by one.
    const seqs = events.map((e) => e.seq);
    const skip = seqs.findIndex((seq, i) => seq !== i + 1);
    expect(skip).toBeGreaterThan(0);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1 + (i >= skip ? VISIBLE_AHEAD : 0)));
    expect(events.slice(-1).map(kind)).toEqual(["reply_end"]);
    const end = events.at(-1)!.event;
    expect(end?.$case === "replyEnd" && end.value.error?.code).toBe("server_restarted");
    const again = await n.client.reply({
      sessionId: session.id,
      input: { $case: "userMessage", value: { text: "hello again", content: [] } },
    });
    expect(again.message?.finishedReason).toBe(1);
    expect(await readFile(path.join(s.workdir, "runs.txt"), "utf8")).toBe("started\n");
    expect((await n.client.getSession(idle.id)).status).toBe(SessionStatus.SESSION_STATUS_IDLE);
  });

  it("refuses a confirmation whose write fails and leaves the call parked, on disk and in reads", async () => {
    const s = await prepare({
      turns: [
        {
          match: { lastUser: "go" },
          toolCalls: [
            { id: "c1", name: "Bash", input: { command: "echo ran >> effects.txt && echo ran" } },
          ],
        },
        { match: { toolName: "Bash" }, text: "done" },
      ],
    });
    let n = await launch(s);
    const session = await n.client.createSession({ agentId: "test" });
    const parked = await n.client.reply({
      sessionId: session.id,
      requestId: "m1",
      input: { $case: "userMessage", value: { text: "go", content: [] } },
    });
    const call = parked.pendingToolCalls[0]!;
    const before = await n.client.getSession(session.id);

    n.faults.failNext();
    expectStorageRefusal(
      await refusal(
        n.client.reply({ sessionId: session.id, requestId: "c1", input: confirmInput(call) }),
      ),
    );
    await n.parkway.storageFailure;
    const after = await n.client.getSession(session.id);
    expect(after.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    expect(after.lastSeq).toBe(before.lastSeq);
    expect(after.pendingToolCalls.map((c) => [c.id, c.state])).toEqual([
      [call.id, ToolCallState.TOOL_CALL_STATE_ASKING],
    ]);
    // The same answer again is refused too, never taken for applied.
    expectStorageRefusal(
      await refusal(
        n.client.reply({ sessionId: session.id, requestId: "c1", input: confirmInput(call) }),
      ),
    );
    await sleep(200);
    expect(existsSync(path.join(s.workdir, "effects.txt"))).toBe(false);
    expect(otherErrors(n.log)).toEqual([]);
    await n.close();

    n = await launch(s);
    expect((await n.client.getSession(session.id)).pendingToolCalls.map((c) => c.id)).toEqual([
      call.id,
    ]);
    const done = await n.client.reply({
      sessionId: session.id,
      requestId: "c1",
      input: confirmInput(call),
    });
    expect(done.message?.finishedReason).toBe(1);
    expect(await readFile(path.join(s.workdir, "effects.txt"), "utf8")).toBe("ran\n");
    expect(unhandled).toEqual([]);
  });

  it("answers UNAVAILABLE, never a waiting notice, when the write that parks a reply fails", async () => {
    const s = await prepare({
      turns: [
        {
          match: { lastUser: "go" },
          toolCalls: [{ id: "c1", name: "Bash", input: { command: "echo ran >> effects.txt" } }],
        },
      ],
    });
    let n = await launch(s);
    const session = await n.client.createSession({ agentId: "test" });
    // The start of the reply is not synced; the write that parks it is.
    n.faults.failNext({ synced: true });
    expectStorageRefusal(
      await refusal(
        n.client.reply({
          sessionId: session.id,
          input: { $case: "userMessage", value: { text: "go", content: [] } },
        }),
      ),
    );
    const read = await n.client.getSession(session.id);
    expect(read.pendingToolCalls).toEqual([]);
    expect(otherErrors(n.log)).toEqual([]);
    await n.close();

    // Nobody was told of the call: after the restart the reply ends, nothing is parked.
    n = await launch(s);
    const events = await history(n.client, session.id);
    expect(events.map(kind)).not.toContain("require_user_confirm");
    // The reply's start is written by itself or joined to the write that fails (writes waiting
    // together go to LevelDB as one). Joined, nothing of the reply was stored. Stored by itself,
    // the reply was running when the store failed (a crash): its end skips VISIBLE_AHEAD seqs once.
    const seqs = events.map((e) => e.seq);
    if (events.length > 0) {
      expect(kind(events[0]!)).toBe("reply_start");
      expect(kind(events.at(-1)!)).toBe("reply_end");
      expect(seqs).toEqual(seqs.map((_, i) => i + 1 + (i === seqs.length - 1 ? VISIBLE_AHEAD : 0)));
    }
    const status = await n.client.getSession(session.id);
    expect(status.status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    expect(status.pendingToolCalls).toEqual([]);
    expect(unhandled).toEqual([]);
  });
});
