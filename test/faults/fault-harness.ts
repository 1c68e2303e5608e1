import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { FinishedReason } from "../../src/generated/parkway/v1/content.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { startScriptedModel } from "../../src/model/scripted/index.js";
import { REPO_ROOT, tempDir } from "../helpers/spawn-server.js";
import { checkEffects, readEventLog, transient } from "./fault-checks.js";
import { SeenSeqs } from "./seen-seqs.js";
import { startNotificationWitness } from "./notification-witness.js";

/** How hard to push. */
export interface FaultOptions {
  /** SIGKILLs to deliver (at least). */
  kills: number;
  /** Park and answer operations to complete (at least). */
  minOps: number;
  /** Sessions driven at the same time. */
  sessions: number;
  /** Operations between a restart and the next kill: a random number in this range. */
  opsPerLife: [number, number];
  /** Stop even if the targets are not met. */
  timeLimitMs: number;
}

/** What happened, and every invariant that did not hold. */
export interface FaultReport {
  kills: number;
  parks: number;
  answers: number;
  retriedAfterCrash: number;
  effects: number;
  /** Events the sessions' streams received, and how many of them a crash lost unwritten. */
  streams?: { streamed: number; lost: number };
  /** POSTs the receiver got, the calls they listed, and notifications left in the outbox. */
  notifications?: { posts: number; notifiedCalls: number; outboxLeft: number };
  violations: string[];
}

interface Server {
  child: ChildProcess;
  address: string;
}

async function launch(config: string, dataDir: string): Promise<Server> {
  const child = spawn(
    process.execPath,
    ["bin/parkway.js", "serve", "--config", config, "--data", dataDir, "--listen", "127.0.0.1:0"],
    { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  const output: string[] = [];
  createInterface({ input: child.stderr }).on("line", (l) => output.push(l));
  const address = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) =>
      reject(new Error(`server exited (${code}): ${output.join("\n")}`)),
    );
    createInterface({ input: child.stdout }).on("line", (line) => {
      output.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; address?: string };
        if (entry.msg === "listening" && entry.address) resolve(entry.address);
      } catch {
        // not a log line
      }
    });
  });
  return { child, address };
}

/**
 * Drives parks and answers through the real client against the real server as a child process,
 * SIGKILLs it at random moments, restarts it on the same data directory, and checks the promises
 * of durability: every acknowledged park is still there and resumable, no answer is applied twice,
 * no server tool runs twice (side effects are counted in a file), every session's event log
 * is gap-free and without duplicates, and no call id comes back for another call, though the model
 * gives every call the same id.
 */
export async function runFaults(options: FaultOptions): Promise<FaultReport> {
  const root = await tempDir("parkway-faults-");
  const workdir = path.join(root, "work");
  const dataDir = path.join(root, "data");
  const effects = path.join(workdir, "effects.txt");
  const model = await startScriptedModel({
    script: {
      turns: [
        {
          match: { lastUser: "^go " },
          repeat: true,
          // Like many models, it numbers its calls per turn: every call is call_0 to it.
          toolCalls: [
            {
              id: "call_0",
              name: "Bash",
              input: { command: 'echo "{{last_user}}" >> effects.txt' },
            },
          ],
        },
        { match: { toolName: "Bash" }, repeat: true, text: "ok" },
      ],
    },
  });
  const witness = await startNotificationWitness();
  const config = path.join(root, "parkway.json");
  await writeFile(
    config,
    JSON.stringify({
      model: { url: model.url, name: "scripted", maxRetries: 0 },
      // Every session appends to the one effects file, so they share the agent's directory.
      agents: [
        {
          id: "test",
          workingDirectories: [workdir],
          shareWorkingDirectories: true,
          notifications: [witness.target],
        },
      ],
    }),
  );

  const report: FaultReport = {
    kills: 0,
    parks: 0,
    answers: 0,
    retriedAfterCrash: 0,
    effects: 0,
    violations: [],
  };
  const started = Date.now();
  let server = await launch(config, dataDir);
  let client: ParkwayClient = createParkwayClient(server.address, { timeoutMs: 10_000 });
  let ready: Promise<void> = Promise.resolve();
  let stopping = false;
  const completed = new Set<string>();
  const seen = new SeenSeqs(report.violations);

  const done = () =>
    (report.kills >= options.kills && report.parks + report.answers >= options.minOps) ||
    Date.now() - started > options.timeLimitMs;

  /** Returns the call still parked when it stopped, if one is. */
  async function drive(index: number): Promise<string | undefined> {
    const sessionId = (await client.createSession({ agentId: "test" })).id;
    await seen.add(client, index, sessionId);
    let n = 0;
    let parkedCall: string | undefined;
    let confirmSent = false;
    const tag = () => `go s${index}-${n}`;
    // Every call id this session parked: the server names each call afresh.
    const parkedIds = new Set<string>();
    const parked = (id: string) => {
      if (id !== parkedCall && parkedIds.has(id)) {
        report.violations.push(`session ${index}: call id ${id} parked again for ${tag()}`);
      }
      parkedIds.add(id);
      parkedCall = id;
    };
    while (!stopping) {
      try {
        await ready;
        if (!parkedCall) {
          const res = await client.reply({
            sessionId,
            requestId: `m-${index}-${n}`,
            input: { $case: "userMessage", value: { text: tag(), content: [] } },
          });
          const call = res.pendingToolCalls[0];
          if (!call) throw new Error(`no park for ${tag()}: ${JSON.stringify(res.status)}`);
          parked(call.id);
          confirmSent = false;
          report.parks++;
        } else {
          confirmSent = true;
          const res = await client.reply({
            sessionId,
            requestId: `c-${index}-${n}`,
            input: {
              $case: "userConfirmResult",
              value: {
                replyId: "",
                confirmResults: [
                  {
                    confirmed: true,
                    toolCall: {
                      id: parkedCall,
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
            },
          });
          report.answers++;
          if (res.message?.finishedReason === FinishedReason.FINISHED_REASON_COMPLETED) {
            completed.add(tag());
          }
          parkedCall = undefined;
          n++;
        }
      } catch (err) {
        if (!transient(err)) {
          report.violations.push(`session ${index}: unexpected error ${String(err)}`);
          return undefined;
        }
        // The server went away: reconcile with what it stored.
        await sleep(50);
        await ready;
        let state;
        try {
          state = await client.getSession(sessionId);
        } catch {
          continue;
        }
        report.retriedAfterCrash++;
        const pending = state.pendingToolCalls[0];
        if (state.status === SessionStatus.SESSION_STATUS_AWAITING_PERMISSION && pending) {
          if (parkedCall && !confirmSent && pending.id !== parkedCall) {
            report.violations.push(
              `session ${index}: parked ${parkedCall} but ${pending.id} is pending`,
            );
          }
          parked(pending.id);
        } else if (state.status === SessionStatus.SESSION_STATUS_IDLE) {
          if (parkedCall && !confirmSent) {
            report.violations.push(
              `session ${index}: acknowledged park of ${parkedCall} is gone (status idle)`,
            );
          }
          // The message or the answer in flight applied or not; either way the reply is over.
          if (parkedCall || state.lastSeq > 0) n++;
          parkedCall = undefined;
        }
      }
    }
    return parkedCall;
  }

  async function killer(): Promise<void> {
    while (!done()) {
      // Let a random number of operations complete, then kill at a random moment of the next ones.
      const [lo, hi] = options.opsPerLife;
      const target = report.parks + report.answers + lo + Math.floor(Math.random() * (hi - lo));
      while (report.parks + report.answers < target && Date.now() - started < options.timeLimitMs) {
        await sleep(5);
      }
      await sleep(Math.random() * 40);
      if (done()) break;
      let release!: () => void;
      ready = new Promise((r) => (release = r));
      server.child.kill("SIGKILL");
      await new Promise((r) => server.child.once("exit", r));
      report.kills++;
      client.close();
      server = await launch(config, dataDir);
      client = createParkwayClient(server.address, { timeoutMs: 10_000 });
      await seen.rewatch(client);
      release();
    }
    stopping = true;
  }

  const [, ...ends] = await Promise.all([
    killer(),
    ...Array.from({ length: options.sessions }, (_, i) => drive(i)),
  ]);

  // Invariants over what was stored.
  report.effects = await checkEffects(effects, completed, report.violations);
  const sessions = await client.listSessions({ pageSize: 1000 });
  const logs = new Map<string, ServerEvent[]>();
  for (const s of sessions.sessions) {
    logs.set(s.id, await readEventLog(client, s.id, s.lastSeq, report.violations));
  }
  report.streams = await seen.check(logs);
  client.close();
  await witness.quiet();
  server.child.kill("SIGTERM");
  await new Promise((r) => server.child.once("exit", r));
  await model.close();
  const parkedAtEnd = ends.filter((call): call is string => call !== undefined);
  report.notifications = await witness.check(dataDir, parkedAtEnd, report.violations);
  return report;
}
