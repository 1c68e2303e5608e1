import { readFile, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createParkwayClient,
  type ParkwayClient,
  ParkwayClientError,
} from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { ToolResultState } from "../../src/generated/parkway/v1/content.js";
import { PermissionBehavior, PermissionMode } from "../../src/generated/parkway/v1/permission.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { startScriptedModel, type ScriptedModelServer } from "../../src/model/scripted/index.js";
import { allEvents, collect, kind, startedCalls, toolResult } from "../helpers/parkway-harness.js";
import { startPostgres, type TestPostgres } from "../helpers/postgres.js";
import { type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";
import { VISIBLE_AHEAD } from "../../src/session/seq-epoch.js";
import { freePort } from "../helpers/free-port.js";
import { sample } from "../helpers/store-reads.js";

/** Two Parkway nodes on one PostgreSQL database, each in a process of its own. */
let postgres: TestPostgres;
let model: ScriptedModelServer | undefined;
const nodes: SpawnedServer[] = [];
const clients: ParkwayClient[] = [];
beforeAll(async () => {
  postgres = await startPostgres();
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(nodes.splice(0).map((n) => n.stop()));
  await model?.close();
  model = undefined;
});
afterAll(async () => {
  await postgres?.stop();
});

async function startNodes(
  count: number,
  turns: unknown[],
  database: Record<string, unknown> = { leaseTimeout: "1s" },
  extraArgs: (node: number) => string[] = () => [],
) {
  const root = await tempDir("parkway-nodes-");
  const workdir = path.join(root, "work");
  model = await startScriptedModel({ script: { turns } as never });
  const url = await postgres.createDatabase();
  const config = path.join(root, "parkway.json");
  await writeFile(
    config,
    JSON.stringify({
      model: { url: model.url, name: "scripted", maxRetries: 0 },
      database: { url, ...database },
      agents: [
        {
          id: "test",
          workingDirectories: [workdir],
          shareWorkingDirectories: true,
          permissions: { allow: ["Bash"] },
        },
      ],
    }),
  );
  const started: { node: SpawnedServer; client: ParkwayClient; restart(): Promise<void> }[] = [];
  for (let i = 0; i < count; i++) {
    const launch = (address?: string) =>
      spawnServer({
        dataDir: path.join(root, `unused-${i}`),
        direct: true,
        args: ["--config", config, ...(address ? ["--listen", address] : []), ...extraArgs(i)],
      });
    const node = await launch();
    nodes.push(node);
    const client = createParkwayClient(node.address);
    clients.push(client);
    const entry = {
      node,
      client,
      /** SIGKILL, then the same node started again on its address. */
      async restart() {
        const exited = new Promise((resolve) => entry.node.child.once("exit", resolve));
        process.kill(-entry.node.child.pid!, "SIGKILL");
        await exited;
        entry.node = await launch(entry.node.address);
        nodes.push(entry.node);
      },
    };
    started.push(entry);
  }
  return { workdir, nodes: started };
}

const RUN = {
  match: { lastUser: "run" },
  toolCalls: [{ name: "Bash", input: { command: "echo ran >> ran.txt && sleep 60" } }],
};
const PARK = {
  match: { lastUser: "park" },
  toolCalls: [
    { name: "Write", input: { file_path: "parked.txt", content: "answered on another node" } },
  ],
};
const DONE = { text: "done", repeat: true };

/**
 * Seqs one after another from 1 but for one skip, past what a node that died running the reply
 * may have shown before writing (its model's stream goes out ahead of its writes).
 */
function expectOneSkip(events: ServerEvent[]): void {
  const seqs = events.map((e) => e.seq);
  const steps = seqs.slice(1).map((seq, i) => seq - seqs[i]!);
  expect(seqs[0]).toBe(1);
  expect(steps.filter((step) => step !== 1)).toEqual([VISIBLE_AHEAD + 1]);
}

describe("several nodes on one PostgreSQL", () => {
  it("a node's death: another ends its running reply as a restart would, and answers the parked one", async () => {
    const {
      workdir,
      nodes: [a, b],
    } = await startNodes(2, [RUN, PARK, DONE]);
    const parkedSession = await a!.client.createSession({ agentId: "test" });
    const parkChat = await a!.client.attach(parkedSession.id);
    const parked = await collect(parkChat.message("park"));
    expect(parked.map(kind).slice(-2)).toEqual(["require_user_confirm", "reply_parked"]);
    parkChat.close();

    const running = await a!.client.createSession({ agentId: "test" });
    const runChat = await a!.client.attach(running.id);
    const seen: ServerEvent[] = [];
    for await (const e of runChat.message("run")) {
      seen.push(e);
      if (e.event?.$case === "toolResultStart") break;
    }
    for (let i = 0; i < 100 && !existsSync(path.join(workdir, "ran.txt")); i++) await sleep(50);
    expect(existsSync(path.join(workdir, "ran.txt"))).toBe(true);

    // While node A runs the reply, node B may not touch the session.
    const refused = await b!.client
      .setMode(running.id, PermissionMode.PERMISSION_MODE_ACCEPT_EDITS)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refused).toBeInstanceOf(ParkwayClientError);
    expect(String(refused)).toMatch(/served by another node/);
    expect((refused as ParkwayClientError).codeName).toBe("UNAVAILABLE");
    expect((refused as ParkwayClientError).message).toMatch(/served by another node/);

    // Node A dies with the reply running; within the lease timeout node B ends it.
    runChat.close();
    process.kill(-a!.node.child.pid!, "SIGKILL");
    await new Promise((resolve) => a!.node.child.once("exit", resolve));
    let status = (await b!.client.getSession(running.id)).status;
    for (let i = 0; i < 200 && status !== SessionStatus.SESSION_STATUS_IDLE; i++) {
      await sleep(50);
      status = (await b!.client.getSession(running.id)).status;
    }
    expect(status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    const events = await allEvents(b!.client, running.id);
    expectOneSkip(events);
    // Every event the stream saw is stored as it saw it: no seq went to another event.
    const stored = new Map(events.map((e) => [e.seq, e.id]));
    for (const e of seen) expect(stored.get(e.seq)).toBe(e.id);
    const end = events.findLast((e) => e.event?.$case === "replyEnd");
    expect(end?.event?.$case === "replyEnd" && end.event.value).toMatchObject({
      finishedReason: 2,
      error: { code: "server_restarted" },
    });
    const [callId] = startedCalls(seen);
    expect(toolResult(events, callId!).state).toBe(ToolResultState.TOOL_RESULT_STATE_INTERRUPTED);
    // The command was not run again.
    expect(await readFile(path.join(workdir, "ran.txt"), "utf8")).toBe("ran\n");

    // The reply parked through node A is answered through node B.
    const view = await b!.client.getSession(parkedSession.id);
    expect(view.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    const answer = await b!.client.attach(parkedSession.id, { afterSeq: view.lastSeq });
    await answer.confirm(view.pendingToolCalls[0]!);
    const after = await collect(answer.untilSettled());
    answer.close();
    const last = after.findLast((e) => e.event?.$case === "replyEnd");
    expect(last?.event?.$case === "replyEnd" && last.event.value.finishedReason).toBe(1);
    expect(await readFile(path.join(workdir, "parked.txt"), "utf8")).toBe(
      "answered on another node",
    );
  });

  it("a client given every node's address with round robin spreads its calls over them", async () => {
    const ports = [await freePort(), await freePort()];
    const { nodes: started } = await startNodes(2, [DONE], undefined, (i) => [
      "--metrics-listen",
      `127.0.0.1:${ports[i]}`,
    ]);
    const client = createParkwayClient(`ipv4:${started.map((n) => n.node.address).join(",")}`, {
      channelOptions: {
        "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
      },
    });
    clients.push(client);
    for (let i = 0; i < 8; i++) {
      const session = await client.createSession({ agentId: "test" });
      // Three calls a round: with two, round robin would send every reply to the same node.
      expect((await client.getSession(session.id)).id).toBe(session.id);
      const reply = await client.reply({
        sessionId: session.id,
        input: { $case: "userMessage", value: { text: "hi", content: [] } },
      });
      expect(reply.message?.finishedReason).toBe(1);
    }
    const replies = await Promise.all(
      ports.map((port) => sample(`http://127.0.0.1:${port}/metrics`, "parkway_replies_total")),
    );
    expect(replies.reduce((a, b) => a + b, 0)).toBe(8);
    for (const count of replies) expect(count).toBeGreaterThan(0);
  });

  it("any node serves any client: a stream on C follows a reply running on A, and B interrupts it", async () => {
    const {
      workdir,
      nodes: [a, b, c],
    } = await startNodes(3, [RUN, DONE]);
    const session = await a!.client.createSession({ agentId: "test" });
    const watcher = await c!.client.attach(session.id, { afterSeq: 0 });
    const chat = await a!.client.attach(session.id);
    await chat.send({ $case: "userMessage", value: { text: "run", content: [] } });
    for (let i = 0; i < 200 && !existsSync(path.join(workdir, "ran.txt")); i++) await sleep(50);
    expect(existsSync(path.join(workdir, "ran.txt"))).toBe(true);

    // Reads take no lease: while A holds it, B and C list the session's rules and explain a call.
    const rules = await b!.client.listRules({ sessionId: session.id });
    expect(rules.map((r) => [r.toolName, r.behavior])).toContainEqual([
      "Bash",
      PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW,
    ]);
    const input = JSON.stringify({ command: "mkdir made" });
    const decision = await c!.client.explain({ sessionId: session.id, toolName: "Bash", input });
    expect(decision.behavior).toBe(PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW);
    expect(decision.rule?.toolName).toBe("Bash");

    // Node B does not run the reply: its stream forwards the interrupt to node A.
    const other = await b!.client.attach(session.id);
    await other.interrupt();
    const seen: ServerEvent[] = [];
    for (;;) {
      const e = await watcher.next(AbortSignal.timeout(20_000));
      if (!e) break;
      seen.push(e);
      if (e.event?.$case === "replyEnd") break;
    }
    other.close();
    chat.close();
    watcher.close();

    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    const end = seen.at(-1);
    expect(end?.event?.$case === "replyEnd" && end.event.value.finishedReason).toBe(2);
    const [callId] = startedCalls(seen);
    expect(toolResult(seen, callId!).state).toBe(ToolResultState.TOOL_RESULT_STATE_INTERRUPTED);
    expect((await c!.client.getSession(session.id)).status).toBe(SessionStatus.SESSION_STATUS_IDLE);
  });

  it("a node that lost its lease while paused cannot write: its reply was ended by another node", async () => {
    const short = {
      match: { lastUser: "short" },
      toolCalls: [{ name: "Bash", input: { command: "echo ran >> ran.txt && sleep 2" } }],
    };
    const {
      workdir,
      nodes: [a, b],
    } = await startNodes(2, [short, DONE]);
    const session = await a!.client.createSession({ agentId: "test" });
    const chat = await a!.client.attach(session.id);
    for await (const e of chat.message("short")) {
      if (e.event?.$case === "toolResultStart") break;
    }
    for (let i = 0; i < 100 && !existsSync(path.join(workdir, "ran.txt")); i++) await sleep(50);

    // Node A freezes (a long GC pause, a stopped VM) while its command runs; B takes over.
    process.kill(-a!.node.child.pid!, "SIGSTOP");
    let view = await b!.client.getSession(session.id);
    for (let i = 0; i < 200 && view.status !== SessionStatus.SESSION_STATUS_IDLE; i++) {
      await sleep(50);
      view = await b!.client.getSession(session.id);
    }
    expect(view.status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    const ended = await allEvents(b!.client, session.id);

    // A wakes up, its command finishes, and it tries to write the result: refused, by its lease.
    process.kill(-a!.node.child.pid!, "SIGCONT");
    await sleep(3_000);
    chat.close();
    const after = await allEvents(b!.client, session.id);
    expect(after).toEqual(ended);
    expectOneSkip(after);
    expect(after.filter((e) => e.event?.$case === "replyEnd")).toHaveLength(1);
    // A noticed: it logged the lost lease, or (frozen inside a write, whose transaction the database
    // ended after the lease timeout to free the lease's row) it stopped on the failed write.
    const noticed =
      a!.node.output.join("\n").includes("session lease lost to another node") ||
      a!.node.child.exitCode !== null;
    expect(noticed).toBe(true);
  });

  it("a node restarted under its database.nodeId takes its sessions back at once, whatever the lease timeout", async () => {
    const {
      workdir,
      nodes: [a],
    } = await startNodes(1, [RUN, DONE], { leaseTimeout: "10m", nodeId: "node-a" });
    const session = await a!.client.createSession({ agentId: "test" });
    const chat = await a!.client.attach(session.id);
    for await (const e of chat.message("run")) {
      if (e.event?.$case === "toolResultStart") break;
    }
    for (let i = 0; i < 100 && !existsSync(path.join(workdir, "ran.txt")); i++) await sleep(50);
    chat.close();
    await a!.restart();
    // Ended at start-up, as on LevelDB; under a new name it would wait ten minutes for the lease.
    const status = async () =>
      (await a!.client.getSession(session.id).catch(() => undefined))?.status;
    let now = await status();
    for (let i = 0; i < 100 && now !== SessionStatus.SESSION_STATUS_IDLE; i++) {
      await sleep(50);
      now = await status();
    }
    expect(now).toBe(SessionStatus.SESSION_STATUS_IDLE);
    const events = await allEvents(a!.client, session.id);
    const end = events.findLast((e) => e.event?.$case === "replyEnd");
    expect(end?.event?.$case === "replyEnd" && end.event.value.error?.code).toBe(
      "server_restarted",
    );
    expect(await readFile(path.join(workdir, "ran.txt"), "utf8")).toBe("ran\n");
  });
});
