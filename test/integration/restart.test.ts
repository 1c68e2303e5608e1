import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import {
  PermissionBehavior,
  PermissionRule,
  RuleScope,
  RuleSource,
} from "../../src/generated/parkway/v1/permission.js";
import {
  type Script,
  startScriptedModel,
  type ScriptedModelServer,
} from "../../src/model/scripted/index.js";
import { collect, kind, startedCalls } from "../helpers/parkway-harness.js";
import { type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";
import { VISIBLE_AHEAD } from "../../src/session/seq-epoch.js";

interface Crashable {
  model: ScriptedModelServer;
  server: SpawnedServer;
  client: ParkwayClient;
  root: string;
  config: string;
  restart(how: "SIGKILL" | "SIGTERM"): Promise<void>;
  close(): Promise<void>;
}

let c: Crashable | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

/** The real server as a child process, on the same data directory across restarts. */
/** A port that is free now, for a server that must come back on the same address. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function start(
  script: Script,
  agent: Record<string, unknown> = {},
  listen?: string,
): Promise<Crashable> {
  const root = await tempDir("parkway-restart-");
  const workdir = path.join(root, "work");
  const model = await startScriptedModel({ script });
  const config = path.join(root, "parkway.json");
  await writeFile(
    config,
    JSON.stringify({
      model: { url: model.url, name: "scripted", maxRetries: 0 },
      agents: [{ id: "test", workingDirectories: [workdir], ...agent }],
    }),
  );
  const dataDir = path.join(root, "data");
  const launch = () =>
    spawnServer({ dataDir, args: ["--config", config, ...(listen ? ["--listen", listen] : [])] });
  const self: Crashable = {
    model,
    server: await launch(),
    client: undefined as unknown as ParkwayClient,
    root,
    config,
    async restart(how) {
      self.client.close();
      if (how === "SIGKILL") {
        process.kill(-self.server.child.pid!, "SIGKILL");
        await new Promise((resolve) => self.server.child.once("exit", resolve));
      } else {
        await self.server.stop();
      }
      self.server = await launch();
      self.client = createParkwayClient(self.server.address);
    },
    async close() {
      self.client.close();
      await self.server.stop();
      await model.close();
    },
  };
  self.client = createParkwayClient(self.server.address);
  return self;
}

const replyEnd = (events: ServerEvent[]) => {
  const e = events.find((x) => x.event?.$case === "replyEnd");
  return e?.event?.$case === "replyEnd" ? e.event.value : undefined;
};

describe("restarts", () => {
  it("keeps a parked reply through SIGKILL and resumes it after the restart", async () => {
    c = await start({
      turns: [
        {
          toolCalls: [
            { id: "c1", name: "Bash", input: { command: "touch kept.txt && echo kept" } },
          ],
        },
        { text: "All done." },
      ],
    });
    const session = await c.client.createSession({ agentId: "test" });
    const chat = await c.client.attach(session.id);
    const before = await collect(chat.message("go"));
    expect(before.map(kind).slice(-2)).toEqual(["require_user_confirm", "reply_parked"]);
    chat.close();

    await c.restart("SIGKILL");
    const parked = await c.client.getSession(session.id);
    expect(parked.status).toBe(SessionStatus.SESSION_STATUS_AWAITING_PERMISSION);
    expect(parked.pendingToolCalls.map((call) => call.id)).toEqual(startedCalls(before));
    expect(parked.lastSeq).toBe(before[before.length - 1]!.seq);

    const again = await c.client.attach(session.id, { afterSeq: parked.lastSeq });
    const reannounced = await again.next();
    expect(reannounced?.event?.$case).toBe("requireUserConfirm");
    expect(reannounced?.replayed).toBe(true);
    await again.send({
      $case: "userConfirmResult",
      value: {
        replyId: "",
        confirmResults: [
          {
            confirmed: true,
            toolCall: { ...parked.pendingToolCalls[0]!, input: "" },
            rules: [],
            reason: "",
          },
        ],
      },
    });
    const after = await collect(again.untilSettled());
    again.close();
    expect(after[0]!.seq).toBe(parked.lastSeq + 1);
    expect(after.map(kind)).not.toContain("reply_start");
    expect(replyEnd(after)?.finishedReason).toBe(1);
    expect(existsSync(path.join(session.workingDirectories[0]!, "kept.txt"))).toBe(true);
    expect(JSON.stringify(c.model.requests.at(-1)?.messages)).toContain("kept");
  });

  it("keeps an always-allow rule accepted with a confirmation through SIGKILL: the next such call runs unasked", async () => {
    c = await start({
      turns: [
        { toolCalls: [{ id: "c1", name: "Bash", input: { command: "python3 -c 'print(1)'" } }] },
        { text: "First done." },
        {
          toolCalls: [{ id: "c2", name: "Bash", input: { command: "python3 -c 'print(6 * 7)'" } }],
        },
        { text: "Second done." },
      ],
    });
    const session = await c.client.createSession({ agentId: "test" });
    const chat = await c.client.attach(session.id);
    const first = await collect(chat.message("go"));
    const asked = first.find((e) => e.event?.$case === "requireUserConfirm");
    const call =
      asked?.event?.$case === "requireUserConfirm" ? asked.event.value.toolCalls[0] : undefined;
    expect(call, "the first call asks").toBeDefined();
    const rule = PermissionRule.fromPartial({
      toolName: "Bash",
      ruleContent: "python3:*",
      behavior: PermissionBehavior.PERMISSION_BEHAVIOR_ALLOW,
    });
    await chat.confirm(call!, { rules: [rule], scope: "session" });
    expect(replyEnd(await collect(chat.untilSettled()))?.finishedReason).toBe(1);
    chat.close();

    await c.restart("SIGKILL");
    const [kept] = await c.client.listRules({ sessionId: session.id });
    expect(kept).toMatchObject({
      toolName: "Bash",
      ruleContent: "python3:*",
      source: RuleSource.RULE_SOURCE_CONFIRMATION,
      scope: RuleScope.RULE_SCOPE_SESSION,
      sessionId: session.id,
    });
    const { lastSeq } = await c.client.getSession(session.id);
    const again = await c.client.attach(session.id, { afterSeq: lastSeq });
    const second = await collect(again.message("again"));
    again.close();
    expect(second.map(kind), "the second call runs without asking").not.toContain(
      "require_user_confirm",
    );
    expect(replyEnd(second)?.finishedReason).toBe(1);
    expect(JSON.stringify(c.model.requests.at(-1)?.messages)).toContain("42");
  });

  it("ends a reply that was running with REPLY_END(interrupted) and never runs its tool again", async () => {
    c = await start(
      {
        turns: [
          {
            match: { lastUser: "run it" },
            toolCalls: [
              {
                id: "slow",
                name: "Bash",
                input: {
                  command:
                    "echo run >> runs.txt; sleep 30 & echo $! > sleep.pid; echo started; wait",
                },
              },
            ],
          },
          { match: { lastUser: "hello again" }, text: "fresh reply" },
        ],
      },
      { permissionMode: "bypass" },
    );
    const session = await c.client.createSession({ agentId: "test" });
    const chat = await c.client.attach(session.id);
    await chat.send({ $case: "userMessage", value: { text: "run it", content: [] } });
    const seen: string[] = [];
    for (;;) {
      const e = await chat.next(AbortSignal.timeout(10_000));
      if (!e) throw new Error(`the stream ended after ${seen.join(", ")}`);
      seen.push(`${kind(e)} ${JSON.stringify(e.event?.value)}`);
      if (e.event?.$case === "replyEnd") throw new Error(seen.join("\n"));
      if (e.event?.$case === "toolResultTextDelta" && e.event.value.delta.includes("started"))
        break;
    }
    const seenUpTo = chat.lastSeq;
    chat.close();
    await c.restart("SIGKILL");
    try {
      const tail = await collect(
        (await c.client.attach(session.id, { afterSeq: seenUpTo })).untilSettled(
          AbortSignal.timeout(10_000),
        ),
      );
      expect(tail.map(kind)).toEqual(["tool_result_text_delta", "tool_result_end", "reply_end"]);
      // The reply was running: its seqs skip past what the crash may have lost unwritten.
      expect(tail.map((e) => e.seq)).toEqual(
        [0, 1, 2].map((i) => seenUpTo + VISIBLE_AHEAD + 1 + i),
      );
      const end = replyEnd(tail);
      expect(end?.finishedReason).toBe(2);
      expect(end?.error?.code).toBe("server_restarted");
      const toolEnd = tail.find((e) => e.event?.$case === "toolResultEnd");
      expect(toolEnd?.event?.$case === "toolResultEnd" && toolEnd.event.value.state).toBe(3);
      // The session works again, and the tool ran exactly once.
      const next = await c.client.reply({
        sessionId: session.id,
        input: { $case: "userMessage", value: { text: "hello again", content: [] } },
      });
      expect(next.message?.finishedReason).toBe(1);
      expect(
        (await readFile(path.join(session.workingDirectories[0]!, "runs.txt"), "utf8"))
          .trim()
          .split("\n"),
      ).toEqual(["run"]);
    } finally {
      const pid = Number(
        (
          await readFile(path.join(session.workingDirectories[0]!, "sleep.pid"), "utf8").catch(
            () => "0",
          )
        ).trim(),
      );
      if (pid > 0) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    }
  });

  it("applies an expiry whose deadline passed while the server was down", async () => {
    c = await start(
      {
        turns: [
          { toolCalls: [{ id: "c1", name: "Bash", input: { command: "touch x && echo x" } }] },
          { text: "It expired." },
        ],
      },
      { confirmTimeout: "1s", expiryPolicy: "deny" },
    );
    const session = await c.client.createSession({ agentId: "test" });
    const chat = await c.client.attach(session.id);
    const before = await collect(chat.message("go"));
    chat.close();
    expect(kind(before[before.length - 1]!)).toBe("reply_parked");
    c.server.child.kill("SIGSTOP");
    await new Promise((resolve) => setTimeout(resolve, 1500));
    process.kill(-c.server.child.pid!, "SIGKILL");
    c.server.child.kill("SIGCONT");
    await new Promise((resolve) => c!.server.child.once("exit", resolve));
    c.server = await spawnServer({
      dataDir: path.join(c.root, "data"),
      args: ["--config", c.config],
    });
    c.client = createParkwayClient(c.server.address);
    const resumed = await c.client.attach(session.id, { afterSeq: before[before.length - 1]!.seq });
    const events = await collect(resumed.untilSettled(AbortSignal.timeout(10_000)));
    resumed.close();
    const end = events.find((e) => e.event?.$case === "toolResultEnd");
    expect(end?.event?.$case === "toolResultEnd" && end.event.value.state).toBe(4); // DENIED
    expect(replyEnd(events)?.finishedReason).toBe(1);
    expect(JSON.stringify(c.model.requests.at(-1)?.messages)).toContain("Timed out");
  });

  it("lets a TypeScript session reconnect by itself and resume after SIGKILL", async () => {
    c = await start(
      {
        turns: [
          {
            toolCalls: [
              { id: "r1", name: "Bash", input: { command: "touch again.txt && echo again" } },
            ],
          },
          { text: "Back again." },
        ],
      },
      {},
      `127.0.0.1:${await freePort()}`,
    );
    const client = c.client;
    const session = await client.createSession({ agentId: "test" });
    const chat = await client.attach(session.id);
    const parked = await collect(chat.message("go"));
    const ask = parked.find((e) => e.event?.$case === "requireUserConfirm");
    const call =
      ask?.event?.$case === "requireUserConfirm" ? ask.event.value.toolCalls[0] : undefined;
    expect(call?.id).toBe(startedCalls(parked)[0]);
    // Crash and come back on the same address; the session object is kept.
    process.kill(-c.server.child.pid!, "SIGKILL");
    await new Promise((resolve) => c!.server.child.once("exit", resolve));
    c.server = await spawnServer({
      dataDir: path.join(c.root, "data"),
      args: ["--config", c.config, "--listen", c.server.address],
    });
    await chat.confirm(call!);
    const rest = await collect(chat.untilSettled(AbortSignal.timeout(20_000)));
    chat.close();
    expect(rest.map(kind).at(-1)).toBe("reply_end");
    const seqs = [...parked, ...rest].map((e) => e.seq).filter((seq) => seq > 0);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(existsSync(path.join(session.workingDirectories[0]!, "again.txt"))).toBe(true);
  });
});

describe("SIGTERM", () => {
  it("ends a running reply as interrupted, ends streams with UNAVAILABLE, and loses nothing", async () => {
    c = await start(
      { turns: [{ text: "a slow answer that is still streaming", chunkSize: 1, delayMs: 100 }] },
      {},
    );
    const session = await c.client.createSession({ agentId: "test" });
    const chat = await c.client.attach(session.id, { reconnectForMs: 0 });
    await chat.send({ $case: "userMessage", value: { text: "talk", content: [] } });
    const seen: ServerEvent[] = [];
    while (!seen.some((e) => e.event?.$case === "textBlockDelta")) seen.push((await chat.next())!);
    const stopping = c.server.stop();
    const rest: ServerEvent[] = [];
    const ended = await (async () => {
      try {
        for (;;) {
          const e = await chat.next();
          if (!e) return "end";
          rest.push(e);
        }
      } catch (err) {
        return (err as { codeName?: string }).codeName;
      }
    })();
    await stopping;
    expect(ended).toBe("UNAVAILABLE");
    expect(replyEnd(rest)?.finishedReason).toBe(2);
    // After a restart the log holds exactly what the stream saw, and the session is idle.
    c.server = await spawnServer({
      dataDir: path.join(c.root, "data"),
      args: ["--config", c.config],
    });
    c.client = createParkwayClient(c.server.address);
    const stored = await c.client.getSession(session.id);
    expect(stored.status).toBe(SessionStatus.SESSION_STATUS_IDLE);
    expect(stored.lastSeq).toBe([...seen, ...rest].at(-1)!.seq);
  });
});
