import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type ParkwayClient, ParkwayClientError } from "../../src/client/index.js";
import { SessionStatus } from "../../src/generated/parkway/v1/agent_service.js";
import { FinishedReason } from "../../src/generated/parkway/v1/content.js";
import { startScriptedModel } from "../../src/model/scripted/index.js";
import { confirmInput } from "../helpers/confirm-input.js";
import type { TestPostgres } from "../helpers/postgres.js";
import { tempDir } from "../helpers/spawn-server.js";
import { type DrivenSession, finalCheck } from "./multi-node-checks.js";
import { startModelWitness } from "./model-witness.js";
import { NodeCluster } from "./node-cluster.js";
import { modelNameOf, RUN_COMMAND } from "./reply-overlaps.js";
import { StreamWatchers } from "./stream-watchers.js";
import {
  callAnyNode,
  emptyReport,
  isRetried,
  kindOf,
  type MultiNodeFaultOptions,
  type MultiNodeFaultReport,
  pick,
} from "./multi-node-report.js";

export type { MultiNodeFaultOptions, MultiNodeFaultReport };

/** What the model answers once a command ran. */
const STREAMED = "the command ran; its line is in the effects file, once, as the answer asked";

/**
 * Drives parks and answers through the real client against several nodes of a cluster on one
 * PostgreSQL database, each node the compiled server in a process of its own, every call to a
 * random node; SIGKILLs random nodes and crashes PostgreSQL at random moments. A node that exits
 * (killed, or stopped by a failed write) is started again on its address under its name; a call
 * that fails with a transient error is sent again, to a random node, with its request id. Each
 * session has a Chat stream, attached again to a random node when it breaks. The promises of
 * `finalCheck` are checked once the targets are reached.
 */
export async function runMultiNodeFaults(
  postgres: TestPostgres,
  options: MultiNodeFaultOptions,
): Promise<MultiNodeFaultReport> {
  const root = await tempDir("parkway-nodes-faults-");
  const workdir = path.join(root, "work");
  const model = await startScriptedModel({
    script: {
      turns: [
        {
          match: { lastUser: "^go " },
          repeat: true,
          // Like many models, it numbers its calls per turn: every call is call_0 to it.
          toolCalls: [{ id: "call_0", name: "Bash", input: { command: RUN_COMMAND } }],
        },
        // Streamed in pieces, so that a kill can land while its deltas go out ahead of their write.
        { match: { toolName: "Bash" }, repeat: true, text: STREAMED, chunkSize: 4, delayMs: 2 },
      ],
    },
  });
  const witness = await startModelWitness(model.url);
  const url = await postgres.createDatabase();
  const report = emptyReport();

  const violation = (text: string) => {
    if (!report.violations.includes(text)) report.violations.push(text);
  };
  const cluster = new NodeCluster(
    root,
    options.nodes,
    (node, life) => ({
      model: { url: witness.url, name: modelNameOf(life), maxRetries: 0 },
      database: { url, leaseTimeout: "1s", nodeId: `node-${node}` },
      agents: [
        {
          id: "test",
          // Every session appends to the same files, so they share the agent's directory.
          workingDirectories: [workdir],
          shareWorkingDirectories: true,
          bash: { env: { PARKWAY_FAULTS_LIFE: life } },
        },
      ],
    }),
    (life, line) => violation(`${life} logged: ${line.slice(0, 500)}`),
  );
  const watchers = new StreamWatchers({ violation, counts: report });
  const sessions: DrivenSession[] = [];
  const completed = new Set<string>();
  const postgresCrashes: number[] = [];
  /** The loops that keep a Chat stream attached to each session. */
  const watching: Promise<void>[] = [];
  const started = Date.now();
  let stopping = false;
  const ops = () => report.parks + report.answers;
  const timeUp = () => Date.now() - started > options.timeLimitMs;
  const done = () =>
    timeUp() ||
    (report.kills >= options.kills &&
      report.postgresRestarts >= options.postgresRestarts &&
      ops() >= options.minOps);

  const call = <T>(f: (c: ParkwayClient) => Promise<T>) =>
    callAnyNode(cluster, report, () => stopping, violation, f);

  async function watch(s: DrivenSession): Promise<void> {
    while (!stopping) {
      const refused = await watchers.watch(cluster.anyClient(), s);
      // Attached after the streams were closed for the stop: `closeAll` is called again after.
      if (stopping) break;
      if (refused !== undefined && !isRetried(refused)) {
        const code = kindOf(refused);
        report.attachRefused[code] = (report.attachRefused[code] ?? 0) + 1;
        report.attachMessages[code] ??= (refused as Error).message;
        // A session reported damaged is a broken promise of durability.
        if (code === "DATA_LOSS") violation(`attach refused: ${(refused as Error).message}`);
        // A session reported damaged is a broken promise of durability.
        if (code === "DATA_LOSS") violation(`attach refused: ${(refused as Error).message}`);
      }
      await watchers.ended(s);
      await sleep(50 + Math.random() * 150);
    }
  }

  /** One message or answer of a session's; false when it could not be sent. */
  async function step(s: DrivenSession): Promise<boolean> {
    const tag = `go s${s.index}-${s.n}`;
    const name = `session s${s.index}`;
    if (!s.parked) {
      const res = await call((c) =>
        c.reply({
          sessionId: s.id,
          requestId: `m-${s.index}-${s.n}`,
          input: { $case: "userMessage", value: { text: tag, content: [] } },
        }),
      );
      if (!res) return false;
      const pending = res.pendingToolCalls[0];
      if (pending) {
        if (s.parkedIds.has(pending.id)) violation(`${name}: call id ${pending.id} parked again`);
        s.parkedIds.add(pending.id);
        s.parked = { callId: pending.id, tag };
        report.parks++;
      } else if (res.message?.finishedReason === FinishedReason.FINISHED_REASON_INTERRUPTED) {
        report.interruptedMessages++;
        s.n++;
      } else {
        violation(`${name}: "${tag}" acknowledged without a park: ${JSON.stringify(res.status)}`);
        s.n++;
      }
      return true;
    }
    const parked = s.parked;
    let sent = 0;
    const res = await call((c) => {
      sent++;
      return c.reply({
        sessionId: s.id,
        requestId: `c-${s.index}-${s.n}`,
        input: confirmInput(parked.callId),
      });
    });
    if (!res) {
      // Given up once stopping: whether the answer applied is unknown, so it is not checked.
      s.parked = undefined;
      return false;
    }
    report.answers++;
    s.confirmed.push(parked);
    const reason = res.message?.finishedReason;
    if (reason === FinishedReason.FINISHED_REASON_COMPLETED) completed.add(tag);
    else if (reason === FinishedReason.FINISHED_REASON_INTERRUPTED) report.interruptedAnswers++;
    else {
      // The response names neither the final message nor a park: not the input's first outcome.
      const what = res.message ? `finished_reason ${reason}` : "no message";
      const status = SessionStatus[res.status];
      violation(
        `${name}: the answer of ${tag} (sent ${sent} times) acknowledged with ${what}, status ${status}, ${res.pendingToolCalls.length} calls pending`,
      );
    }
    s.parked = undefined;
    s.n++;
    return true;
  }

  async function drive(index: number): Promise<void> {
    const created = await call((c) => c.createSession({ agentId: "test" }));
    if (!created) return;
    const s: DrivenSession = {
      index,
      id: created.id,
      watchedSeq: 0,
      seen: new Map(),
      jumps: [],
      n: 0,
      parked: undefined,
      parkedIds: new Set(),
      confirmed: [],
    };
    sessions.push(s);
    watching.push(watch(s));
    while (!stopping) {
      try {
        if (!(await step(s))) break;
      } catch (err) {
        const code = err instanceof ParkwayClientError ? err.codeName : "";
        violation(`session s${index}: unexpected error ${code} ${String(err)}`);
        // Goes on from what the session stored, so that one broken promise does not stop the run.
        const state = await call((c) => c.getSession(s.id)).catch(() => undefined);
        const pending = state?.pendingToolCalls[0];
        s.parked = pending ? { callId: pending.id, tag: `go s${index}-${s.n}` } : undefined;
        if (!pending) s.n++;
      }
    }
  }

  /** Waits for a random number of operations in `range`; false once the run is done. */
  async function opsPass(range: [number, number]): Promise<boolean> {
    const target = ops() + pick(range);
    while (ops() < target && !done()) await sleep(5);
    await sleep(Math.random() * 40);
    return !done();
  }

  async function killer(): Promise<void> {
    while (await opsPass(options.opsPerKill)) {
      const up = Array.from({ length: options.nodes }, (_, i) => i).filter((i) => cluster.isUp(i));
      const node = up[Math.floor(Math.random() * up.length)];
      if (node !== undefined && (await cluster.kill(node))) report.kills++;
    }
  }

  async function crasher(): Promise<void> {
    while (await opsPass(options.opsPerPostgresRestart)) {
      postgresCrashes.push(Date.now());
      await postgres.kill();
      report.postgresRestarts++;
      await sleep(pick(options.postgresDownMs));
      await postgres.restart();
    }
  }

  /** Progress lines with PARKWAY_FAULTS_DEBUG=1. */
  const dbg = (...a: unknown[]) =>
    process.env.PARKWAY_FAULTS_DEBUG === "1" &&
    console.log(new Date().toISOString(), ops(), "ops", report.kills, "kills", ...a);
  const progress = setInterval(() => dbg("running"), 10_000);
  try {
    await cluster.start();
    const drivers = Array.from({ length: options.sessions }, (_, i) => drive(i));
    await Promise.all([killer(), crasher()]);
    stopping = true;
    dbg("stopping");
    await Promise.all(drivers);
    await watchers.closeAll();
    await Promise.all(watching);
    await watchers.closeAll();
    await cluster.settled();
    dbg("checking");
    const counts = await finalCheck({
      anyClient: () => cluster.anyClient(),
      sessions,
      completed,
      effects: path.join(workdir, "effects.txt"),
      runs: path.join(workdir, "runs.txt"),
      lives: cluster.lives,
      postgresCrashes,
      modelCalls: witness.calls,
      violations: report.violations,
    });
    Object.assign(report, counts);
    dbg("checked");
  } finally {
    clearInterval(progress);
    stopping = true;
    await watchers.closeAll();
    await cluster.stop();
    await witness.close();
    await model.close();
  }
  report.lives = cluster.lives.length;
  report.failedStarts = cluster.counts.failedStarts;
  report.exits = cluster.counts.exits;
  report.exitLogs = cluster.counts.exitLogs;
  report.nodeErrors = cluster.counts.errors;
  for (const code of Object.keys(report.exits)) {
    // A node stops on its own only when its store failed (fail-stop), with 75.
    if (code !== "75") {
      const last = report.exitLogs[code]?.slice(-3).map((l) => l.slice(0, 200));
      violation(`a node exited with ${code}: ${last?.join(" | ")}`);
    }
  }
  report.durationMs = Date.now() - started;
  return report;
}
