import { writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  createParkwayClient,
  type ParkwayClient,
  ParkwayClientError,
} from "../../src/client/index.js";
import { FinishedReason } from "../../src/generated/parkway/v1/content.js";
import { EXIT_STORAGE_FAILURE } from "../../src/runtime/start-parkway.js";
import { confirmInput } from "../helpers/confirm-input.js";
import { type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";
import type { SmallDisk } from "../helpers/store-faults.js";
import { checkAfterRestart, readEffects } from "./storage-fault-checks.js";
import { Ledger, type LedgerCounts, type TrackedSession } from "./storage-fault-ledger.js";
import { Lives } from "./lives.js";
import { StreamWatchers } from "./stream-watchers.js";
import {
  exitWithin,
  failedFile,
  type NearlyFullStart,
  STREAMED,
  startModel,
  startNearlyFull,
} from "./storage-fault-server.js";

/** How hard to push. */
export interface StorageFaultOptions {
  /** ENOSPC episodes: disk filled, server failed or kept going, disk freed, server restarted. */
  episodes: number;
  /** Sessions driven at the same time. */
  drivers: number;
  /** Operations acknowledged between a restart and the next fill: a random number in this range. */
  opsBeforeFill: [number, number];
  /** After the fill, how long to wait for the server to exit before freeing the disk (ms). */
  exitWaitMs: [number, number];
  /** The share of restarts first tried on a nearly full disk (see `startNearlyFull`). */
  nearlyFullStarts: number;
  /** Stop starting episodes after this long (ms). */
  timeLimitMs: number;
}

/** What happened, and every promise that did not hold. */
export interface StorageFaultReport extends LedgerCounts {
  episodes: number;
  /** Episodes where the server failed and exited with 75. */
  exits75: number;
  /** Episodes where the server kept serving on the full disk until it was freed. */
  keptWorking: number;
  /** Lines in the effects file. */
  effects: number;
  /** What was in flight at the moment each fill began. */
  fillDuring: Record<"text" | "park" | "answer" | "create" | "idle", number>;
  /** Restarts tried on a nearly full disk, by outcome. */
  nearlyFullStarts: Record<NearlyFullStart, number>;
  /** The files LevelDB failed to write, by kind (log, table, MANIFEST), from the server's log. */
  failedWrites: Record<string, number>;
  violations: string[];
}

type OpKind = "text" | "park" | "answer" | "create";

const transient = (err: unknown) =>
  !(err instanceof ParkwayClientError) ||
  ["UNAVAILABLE", "CANCELLED", "DEADLINE_EXCEEDED"].includes(err.codeName);

const pick = ([lo, hi]: [number, number]) => lo + Math.floor(Math.random() * (hi - lo + 1));

/**
 * Drives sessions through the real client against the real server process with its data directory
 * on a small tmpfs, with a Chat stream attached to each session: text streamed, calls parked and confirmed (each confirmed Bash call appends its
 * own line to an effects file outside the small disk), new sessions. At a random moment the disk is
 * filled until ENOSPC; the server must either fail and exit with 75 or keep serving. Then the disk
 * is freed, the server restarted on the same data directory, and every promise checked
 * (`checkAfterRestart`).
 */
export async function runStorageFaults(
  disk: SmallDisk,
  options: StorageFaultOptions,
): Promise<StorageFaultReport> {
  const root = await tempDir("parkway-enospc-");
  const workdir = path.join(root, "work");
  const effects = path.join(workdir, "effects.txt");
  const dataDir = path.join(disk.dir, "data");
  const model = await startModel();
  const config = path.join(root, "parkway.json");
  await writeFile(
    config,
    JSON.stringify({
      model: { url: model.url, name: "scripted", maxRetries: 0 },
      agents: [{ id: "test", workingDirectories: [workdir], shareWorkingDirectories: true }],
    }),
  );
  const ledger = new Ledger();
  const report: StorageFaultReport = {
    ...ledger.counts,
    episodes: 0,
    exits75: 0,
    keptWorking: 0,
    effects: 0,
    fillDuring: { text: 0, park: 0, answer: 0, create: 0, idle: 0 },
    failedWrites: {},
    nearlyFullStarts: { refused: 0, failStopped: 0, served: 0 },
    violations: ledger.violations,
  };
  const launch = () => spawnServer({ dataDir, args: ["--config", config], direct: true });
  let server: SpawnedServer = await launch();
  let client: ParkwayClient = createParkwayClient(server.address, { timeoutMs: 10_000 });
  const lives = new Lives();
  const watchers = new StreamWatchers(ledger);
  const inFlight = new Map<number, OpKind>();
  let acknowledged = 0;
  let stopping = false;

  /** One input for a session; false when the session is done with (a new one is wanted). */
  async function step(s: TrackedSession, driver: number): Promise<boolean> {
    const c = client;
    if (s.parked) {
      inFlight.set(driver, "answer");
      const call = s.parked;
      const requestId = `c-${s.index}-${s.n++}`;
      s.unsure = { kind: "confirm", call, requestId };
      const res = await c.reply({ sessionId: s.id, requestId, input: confirmInput(call.callId) });
      s.unsure = undefined;
      s.parked = undefined;
      s.confirmed.push({ ...call, requestId });
      ledger.counts.answers++;
      if (res.message?.finishedReason !== FinishedReason.FINISHED_REASON_COMPLETED) {
        ledger.violation(`s${s.index}: confirming ${call.tag} acknowledged without completing`);
      }
      return true;
    }
    if (Math.random() < 0.1) return false;
    const park = Math.random() < 0.55;
    inFlight.set(driver, park ? "park" : "text");
    const text = `${park ? "go" : "say"} s${s.index}-${s.n}`;
    const requestId = `m-${s.index}-${s.n++}`;
    s.unsure = { kind: "message", text };
    const res = await c.reply({
      sessionId: s.id,
      requestId,
      input: { $case: "userMessage", value: { text, content: [] } },
    });
    s.unsure = undefined;
    s.messages.push(text);
    ledger.counts.messages++;
    const call = res.pendingToolCalls[0];
    if (park) {
      if (!call) ledger.violation(`s${s.index}: "${text}" acknowledged without a park`);
      else s.parked = { callId: call.id, tag: text };
      ledger.counts.parks++;
    } else {
      const got = res.message?.content.find((b) => b.block?.$case === "text");
      if (got?.block?.$case !== "text" || got.block.value.text !== STREAMED) {
        ledger.violation(`s${s.index}: "${text}" acknowledged without its streamed text`);
      }
      ledger.counts.texts++;
    }
    return true;
  }

  async function drive(driver: number): Promise<void> {
    let session: TrackedSession | undefined;
    while (!stopping) {
      const life = await lives.ready();
      if (stopping) return;
      let failed = false;
      try {
        if (!session || session.lost) {
          inFlight.set(driver, "create");
          const created = await client.createSession({ agentId: "test" });
          session = ledger.add(created.id);
          await watchers.watch(client, session);
        } else if (!(await step(session, driver))) {
          session = undefined;
        }
        acknowledged++;
      } catch (err) {
        if (!transient(err)) ledger.violation(`driver ${driver}: ${String(err)}`);
        failed = true;
      }
      inFlight.delete(driver);
      // The server failed or went away: the check after the restart reconciles the input.
      if (failed) await lives.after(life);
    }
  }

  /** New sessions on a server started on a nearly full disk: acknowledged ones must survive. */
  async function probe(s: SpawnedServer): Promise<void> {
    const c = createParkwayClient(s.address, { timeoutMs: 10_000 });
    try {
      for (let i = 0; i < 5; i++) ledger.add((await c.createSession({ agentId: "test" })).id);
    } catch (err) {
      if (!(err instanceof ParkwayClientError) || err.codeName !== "UNAVAILABLE") {
        ledger.violation(`CreateSession on a nearly full disk failed with ${String(err)}`);
      }
    } finally {
      c.close();
    }
  }

  /** Progress lines with PARKWAY_FAULTS_DEBUG=1. */
  const dbg = (...a: unknown[]) =>
    process.env.PARKWAY_FAULTS_DEBUG === "1" && console.log(new Date().toISOString(), ...a);
  async function episode(): Promise<void> {
    dbg("episode", report.episodes, "acked", acknowledged);
    const target = acknowledged + pick(options.opsBeforeFill);
    const give = Date.now() + 10_000;
    while (acknowledged < target && Date.now() < give) await sleep(2);
    await sleep(Math.random() * 20);
    const during = [...inFlight.values()];
    if (during.length === 0) report.fillDuring.idle++;
    for (const kind of during) report.fillDuring[kind]++;
    dbg("fill", during);
    await disk.fill();
    dbg("filled");
    let code = await exitWithin(server, pick(options.exitWaitMs));
    if (code === undefined) {
      // Still serving on a full disk: space comes back, and it must go on working.
      await disk.free();
      const probe = await client.createSession({ agentId: "test" }).then(
        (s) => ledger.add(s.id),
        (err: unknown) => err,
      );
      if (probe instanceof Error) {
        if (!(probe instanceof ParkwayClientError) || probe.codeName !== "UNAVAILABLE") {
          ledger.violation(`a server that kept running refused CreateSession: ${String(probe)}`);
        }
        code = (await exitWithin(server, 15_000)) ?? (await server.stop());
      } else {
        lives.close();
        code = await server.stop();
        if (code === 0) report.keptWorking++;
      }
    } else {
      await disk.free();
    }
    lives.close();
    dbg("exit", code);
    if (code === EXIT_STORAGE_FAILURE) report.exits75++;
    else if (code !== 0) ledger.violation(`server exited with ${code} after a fill`);
    const output = server.output.join("\n");
    const file = failedFile(server.output);
    if (file) report.failedWrites[file] = (report.failedWrites[file] ?? 0) + 1;
    if (/unhandled|uncaught/i.test(output)) ledger.violation(`server log: ${output.slice(-500)}`);
    while (inFlight.size > 0) await sleep(5);
    await watchers.closeAll();
    client.close();
    if (Math.random() < options.nearlyFullStarts) {
      const started = await startNearlyFull(disk, pick([0, 160 * 1024]), launch, probe);
      dbg("nearly full start", started);
      if ("violation" in started) ledger.violation(started.violation);
      else report.nearlyFullStarts[started.outcome]++;
      if ("file" in started && started.file) {
        report.failedWrites[started.file] = (report.failedWrites[started.file] ?? 0) + 1;
      }
      await disk.free();
    }
    dbg("launch");
    server = await launch();
    client = createParkwayClient(server.address, { timeoutMs: 10_000 });
    report.episodes++;
    dbg("restarted");
    await checkAfterRestart({ client, model, ledger, effects });
    for (const s of ledger.sessions) await watchers.watch(client, s);
    dbg("checked");
  }

  const started = Date.now();
  const drivers = Array.from({ length: options.drivers }, (_, i) => drive(i));
  try {
    while (report.episodes < options.episodes && Date.now() - started < options.timeLimitMs) {
      lives.open();
      await episode();
    }
  } finally {
    stopping = true;
    lives.stop();
    await Promise.all(drivers);
    await watchers.closeAll();
    client.close();
    const code = await server.stop();
    if (code !== 0) ledger.violation(`the last server exited with ${code}`);
    await model.close();
  }
  report.effects = [...(await readEffects(effects)).values()].reduce((a, b) => a + b, 0);
  return Object.assign(report, ledger.counts);
}
