import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import {
  createParkwayClient,
  type ParkwayClient,
  type ParkwaySession,
} from "../../src/client/index.js";
import { parseConfig } from "../../src/config/index.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import {
  type Script,
  type ScriptedModelServer,
  startScriptedModel,
} from "../../src/model/scripted/index.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";
import { captureLog } from "../helpers/capture-log.js";
import { kind } from "../helpers/parkway-harness.js";
import { type WriteFaults, writeFaults } from "../helpers/store-faults.js";

/**
 * A reply's first model call leaves while the reply's start is being written. These tests hold that
 * write (the first LevelDB batch after the message) and look at what happens meanwhile.
 */

interface Node {
  parkway: RunningParkway;
  client: ParkwayClient;
  faults: WriteFaults;
  model: ScriptedModelServer;
  workdir: string;
  /** Lets a held write go, so that the server can close after a failed test. */
  release?: () => void;
}

let node: Node | undefined;
afterEach(async () => {
  node?.release?.();
  node?.client.close();
  await node?.parkway.close();
  await node?.model.close();
  node = undefined;
});

async function launch(script: Script, agent: Record<string, unknown> = {}): Promise<Node> {
  const root = await mkdtemp(path.join(tmpdir(), "parkway-overlap-"));
  const model = await startScriptedModel({ script });
  const workdir = path.join(root, "work");
  await mkdir(workdir);
  const parkway = await startParkway({
    config: parseConfig({
      listen: "127.0.0.1:0",
      data: path.join(root, "data"),
      model: { url: model.url, name: "scripted", maxRetries: 0 },
      agents: [
        { id: "test", workingDirectories: [workdir], shareWorkingDirectories: true, ...agent },
      ] as never,
    }),
    log: captureLog(),
  });
  node = {
    parkway,
    client: createParkwayClient(parkway.address),
    faults: writeFaults(parkway.store),
    model,
    workdir,
  };
  return node;
}

/** Sends `text` with the start's write held; resolves once the model has the request. */
async function sendHeld(n: Node, chat: ParkwaySession, text: string) {
  const hold = n.faults.holdNext();
  n.release = hold.release;
  let acked = false;
  const sent = chat
    .send({ $case: "userMessage", value: { text, content: [] } })
    .then(() => (acked = true));
  sent.catch(() => undefined); // a failed test closes the stream first
  await hold.held;
  for (let i = 0; n.model.requests.length === 0; i++) {
    if (i > 500) throw new Error("the model was not called while the start was held");
    await sleep(10);
  }
  return { release: hold.release, sent, acked: () => acked };
}

/** The events that arrive within `ms`. */
async function arriving(chat: ParkwaySession, ms: number): Promise<ServerEvent[]> {
  const out: ServerEvent[] = [];
  const signal = AbortSignal.timeout(ms);
  try {
    for (;;) {
      const e = await chat.next(signal);
      if (!e) return out;
      out.push(e);
    }
  } catch {
    return out;
  }
}

async function untilEnd(chat: ParkwaySession): Promise<ServerEvent[]> {
  const out: ServerEvent[] = [];
  for (;;) {
    const e = await chat.next(AbortSignal.timeout(10_000));
    if (!e) throw new Error("the stream ended before REPLY_END");
    out.push(e);
    if (kind(e) === "reply_end") return out;
  }
}

describe("a reply's first model call while its start is written", () => {
  it("leaves before the write is done; the model's events and the acknowledgement wait for it", async () => {
    const n = await launch({ turns: [{ match: { lastUser: "^hi$" }, text: "hello there" }] });
    const session = await n.client.createSession({ agentId: "test" });
    const chat = await n.client.attach(session.id, { reconnectForMs: 0 });
    const held = await sendHeld(n, chat, "hi");
    // The model has answered by now; nothing of its answer may be seen before the start is stored.
    const meanwhile = await arriving(chat, 300);
    expect(meanwhile.map(kind)).toEqual(["reply_start"]);
    expect(held.acked()).toBe(false);
    held.release();
    await held.sent;
    const rest = await untilEnd(chat);
    expect(rest.map(kind)).toContain("model_call_start");
    const text = rest
      .filter((e) => e.event?.$case === "textBlockDelta")
      .map((e) => (e.event?.$case === "textBlockDelta" ? e.event.value.delta : ""))
      .join("");
    expect(text).toBe("hello there");
    // One request, with the user's message last.
    expect(n.model.requests).toHaveLength(1);
    expect(JSON.stringify(n.model.requests[0]?.messages.at(-1))).toContain("hi");
    chat.close();
  });

  it("runs no tool before the start is stored", async () => {
    const n = await launch(
      {
        turns: [
          {
            match: { lastUser: "^run$" },
            toolCalls: [{ id: "c1", name: "Bash", input: { command: "echo ran >> runs.txt" } }],
          },
          { match: { toolName: "Bash" }, text: "done" },
        ],
      },
      { permissionMode: "bypass" },
    );
    const session = await n.client.createSession({ agentId: "test" });
    const chat = await n.client.attach(session.id, { reconnectForMs: 0 });
    const held = await sendHeld(n, chat, "run");
    await sleep(300); // the model's tool call has arrived and is allowed
    const runs = path.join(n.workdir, "runs.txt");
    expect(existsSync(runs)).toBe(false);
    held.release();
    await held.sent;
    const events = await untilEnd(chat);
    expect(events.map(kind)).toContain("tool_result_end");
    expect(await readFile(runs, "utf8")).toBe("ran\n");
    chat.close();
  });
});
