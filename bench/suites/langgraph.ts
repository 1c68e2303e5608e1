/**
 * Against what users would pick instead: LangGraph's `interrupt()` / `Command(resume=...)` with its
 * SQLite checkpointer (and its PostgreSQL one), in Python on the same machine in the same run,
 * against Parkway's park → answer → resume over gRPC from the Python client, the same scripted
 * turns on both sides (bench/servers/langgraph_hitl.py: a user message, the "model" answers with
 * one call of bench_noop, which needs a confirmation, so the turn parks durably; the confirmation
 * resumes it, the tool runs, the model ends the turn with "done"). No LLM on either side: LangGraph's
 * model node returns the call itself, Parkway's scripted model (in this process, over HTTP) streams
 * it.
 *
 * The suite installs LangGraph and the Python client (clients/python) into its own virtual
 * environment, `$TMPDIR/parkway-bench-data/langgraph-venv`, reused while the requirements and the
 * client's sources are unchanged (`PARKWAY_BENCH_PYTHON` picks the Python that creates it; python3
 * by default). Each side runs in its own Python process, the two taking turns in rounds.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { BenchConfig } from "../lib/config.js";
import { type BenchPostgres, startBenchPostgres } from "../lib/postgres-cluster.js";
import { latency, type Row, row, single } from "../lib/rows.js";
import { ensureBuilt, scratchDir, type Stack, startStack } from "../lib/stack.js";
import { median, summarize } from "../lib/stats.js";
import { fdatasyncSamples } from "../lib/sync-baselines.js";
import { describeCores } from "../lib/cores.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DRIVER = path.join(ROOT, "bench", "servers", "langgraph_hitl.py");
const CLIENT = path.join(ROOT, "clients", "python");

/** What the virtual environment holds besides the Python client (LangGraph 1.x). */
const REQUIREMENTS = [
  "langgraph>=1.0,<2",
  "langgraph-checkpoint-sqlite>=3.0,<4",
  "langgraph-checkpoint-postgres>=3.0,<4",
  "psycopg[binary]>=3.2,<4",
];

/** Latency samples per round: the two sides take turns every round. */
const ROUND = 50;

/** Files under `dir`, recursively, sorted (caches and build output left out). */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (["__pycache__", "build", "dist"].includes(entry.name) || entry.name.endsWith(".egg-info")) {
      continue;
    }
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(full)));
    else out.push(full);
  }
  return out.sort();
}

/** What the environment must have been built from: the requirements and the client's sources. */
async function venvStamp(): Promise<string> {
  const hash = createHash("sha256");
  for (const file of [
    path.join(CLIENT, "pyproject.toml"),
    ...(await filesUnder(path.join(CLIENT, "src"))),
  ]) {
    hash.update(path.relative(CLIENT, file)).update(await readFile(file));
  }
  return JSON.stringify({ requirements: REQUIREMENTS, client: hash.digest("hex") });
}

/**
 * The Python of the suite's virtual environment, created (built beside it and renamed into place,
 * so concurrent runs never see half of one) and filled from PyPI when missing or stale. Fails with
 * pip's own message when the installation fails.
 */
async function ensureVenv(): Promise<{ python: string; dir: string; installed: boolean }> {
  const cache = path.join(tmpdir(), "parkway-bench-data");
  const dir = path.join(cache, "langgraph-venv");
  const python = path.join(dir, "bin", "python");
  const stamp = await venvStamp();
  const current = await readFile(path.join(dir, "parkway-stamp.json"), "utf8").catch(() => "");
  if (current === stamp && existsSync(python)) return { python, dir, installed: false };
  await mkdir(cache, { recursive: true });
  const building = `${dir}.tmp-${process.pid}`;
  await rm(building, { recursive: true, force: true });
  const run = promisify(execFile);
  const base = process.env.PARKWAY_BENCH_PYTHON ?? "python3";
  try {
    await run(base, ["-m", "venv", building]);
    await run(
      path.join(building, "bin", "python"),
      ["-m", "pip", "install", "--disable-pip-version-check", "-q", ...REQUIREMENTS, CLIENT],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024, timeout: 600_000 },
    );
  } catch (err) {
    await rm(building, { recursive: true, force: true });
    const e = err as Error & { stderr?: string };
    const tail = (e.stderr ?? "").trim().split("\n").slice(-8).join(" | ");
    throw new Error(
      `could not install LangGraph and the Python client into a virtual environment (${base}, ` +
        `${REQUIREMENTS.join(" ")}, clients/python): ${e.message.split("\n")[0]} ${tail}`,
      { cause: err },
    );
  }
  await writeFile(path.join(building, "parkway-stamp.json"), stamp);
  await rm(dir, { recursive: true, force: true });
  try {
    await rename(building, dir);
  } catch (err) {
    // Another run put its own there first: use it when it is current.
    await rm(building, { recursive: true, force: true });
    const theirs = await readFile(path.join(dir, "parkway-stamp.json"), "utf8").catch(() => "");
    if (theirs !== stamp) throw err;
  }
  return { python, dir, installed: true };
}

interface Hello {
  versions: Record<string, string>;
  store: Record<string, string | number>;
}
interface Latencies {
  park: number[];
  resume: number[];
}
interface Throughput {
  seconds: number;
  resumes: number;
  cpu_seconds: number;
  /** The server's CPU time during the resumes (every thread), when its pid was given. */
  server_cpu_seconds?: number;
}

/** One side's Python process (bench/servers/langgraph_hitl.py): a JSON line per command. */
class Driver {
  private lines: string[] = [];
  private wake: (() => void) | undefined;
  private stderr = "";
  private exited = false;

  private constructor(
    readonly name: string,
    private child: ChildProcess,
  ) {
    child.stderr!.on(
      "data",
      (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)),
    );
    createInterface({ input: child.stdout! }).on("line", (line) => {
      this.lines.push(line);
      this.wake?.();
    });
    child.on("exit", () => {
      this.exited = true;
      this.wake?.();
    });
  }

  static async start(
    name: string,
    python: string,
    args: Record<string, unknown>,
  ): Promise<{ driver: Driver; hello: Hello }> {
    const child = spawn(python, [DRIVER, JSON.stringify(args)], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, PYTHONUNBUFFERED: "1" },
    });
    const driver = new Driver(name, child);
    const hello = await driver.next<Hello>();
    return { driver, hello };
  }

  private async next<T>(): Promise<T> {
    while (this.lines.length === 0) {
      if (this.exited) {
        throw new Error(
          `${this.name} driver exited: ${this.stderr.trim().split("\n").slice(-5).join(" | ")}`,
        );
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
    const got = JSON.parse(this.lines.shift()!) as T & { error?: string };
    if (got.error) throw new Error(`${this.name}: ${got.error}`);
    return got;
  }

  call<T>(command: Record<string, unknown>): Promise<T> {
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
    return this.next<T>();
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.stdin!.end(`${JSON.stringify({ op: "exit" })}\n`);
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    await gone;
    clearTimeout(timer);
  }
}

interface Side {
  driver: Driver;
  park: number[];
  resume: number[];
}

/**
 * Warm-up, then `iterations` turns per side in rounds of ROUND, the order alternating; `between`
 * runs after every round.
 */
async function measureLatencies(
  config: BenchConfig,
  drivers: Driver[],
  between: () => void = () => {},
): Promise<Side[]> {
  const sides = drivers.map((driver) => ({ driver, park: [] as number[], resume: [] as number[] }));
  for (const s of sides) await s.driver.call<Latencies>({ op: "latency", n: config.warmup });
  const rounds = Math.max(1, Math.ceil(config.iterations / ROUND));
  for (let r = 0; r < rounds; r++) {
    const n = Math.min(ROUND, config.iterations - r * ROUND);
    for (let j = 0; j < sides.length; j++) {
      const s = sides[(r + j) % sides.length]!;
      const got = await s.driver.call<Latencies>({ op: "latency", n });
      s.park.push(...got.park);
      s.resume.push(...got.resume);
    }
    between();
  }
  return sides;
}

const describeVersions = (v: Record<string, string>) =>
  Object.entries(v)
    .map(([k, x]) => `${k} ${x}`)
    .join(", ");

/** The SQLite rows: park and resume latency, and resumes/s with `manySessions` concurrent. */
async function sqliteRows(
  config: BenchConfig,
  python: string,
  machine: () => string,
): Promise<Row[]> {
  const stack = await startStack(config, { profile: "langgraph" });
  const dir = await scratchDir(config, "langgraph");
  const drivers: Driver[] = [];
  try {
    const lg = await Driver.start("LangGraph (SQLite)", python, {
      target: "langgraph",
      sqlite: path.join(dir, "checkpoints.db"),
    });
    drivers.push(lg.driver);
    const pw = await Driver.start("Parkway (Python client)", python, {
      target: "parkway",
      address: stack.parkway.ready.address,
    });
    drivers.push(pw.driver);
    // The disk's own synced-write latency during the rounds, for context (both sides sync).
    const fsyncs: number[] = [];
    const [lgSide, pwSide] = (await measureLatencies(config, [lg.driver, pw.driver], () =>
      fsyncs.push(...fdatasyncSamples(dir, 10)),
    )) as [Side, Side];
    const f = summarize(fsyncs);
    const disk = `Raw fdatasync of 1 KB on the same disk, 10 between every round: p50 ${Math.round(f.p50)} µs / p99 ${Math.round(f.p99)} µs (n=${f.n}).`;

    const workers = config.manySessions;
    // 16 turns per worker: the ramp-up and the tail, when fewer than `workers` resumes are in
    // flight, are a small part of the run (with 4, Parkway's rate read 10-15% lower).
    const sessions = workers * (config.smoke ? 2 : 16);
    const reps = config.smoke ? 1 : 3;
    const modes = [
      { name: "LangGraph asyncio (AsyncSqliteSaver)", driver: lg.driver, mode: "async" },
      { name: "LangGraph threads (SqliteSaver)", driver: lg.driver, mode: "threads" },
      { name: "Parkway", driver: pw.driver, mode: "async" },
    ];
    const rates = new Map<string, number[]>(modes.map((m) => [m.name, []]));
    const driverCpu = new Map<string, number[]>(modes.map((m) => [m.name, []]));
    const serverCores: number[] = [];
    const serverPerResume: number[] = [];
    // One untimed round per mode first: a server (and a Python process) reaches its steady pace
    // only after a few thousand resumes compiled its paths; the latency rounds before are 450.
    const warmRounds = config.smoke ? 0 : 1;
    for (let w = 0; w < warmRounds; w++) {
      for (const m of modes) {
        await m.driver.call<Throughput>({ op: "throughput", sessions, workers, mode: m.mode });
      }
    }
    for (let rep = 0; rep < reps; rep++) {
      for (let j = 0; j < modes.length; j++) {
        const m = modes[(rep + j) % modes.length]!;
        const command = { op: "throughput", sessions, workers, mode: m.mode };
        let got: Throughput;
        if (m.driver === pw.driver) {
          // The server's CPU during the resumes only, read by the driver as it times them.
          got = await m.driver.call<Throughput>({ ...command, server_pid: stack.parkway.pid });
          if (got.server_cpu_seconds === undefined) throw new Error("no server CPU time");
          serverCores.push(got.server_cpu_seconds / got.seconds);
          serverPerResume.push((got.server_cpu_seconds / got.resumes) * 1e6);
        } else {
          got = await m.driver.call<Throughput>(command);
        }
        rates.get(m.name)!.push(got.resumes / got.seconds);
        driverCpu.get(m.name)!.push(got.cpu_seconds / got.seconds);
      }
    }
    const rateOf = (name: string) => median(rates.get(name)!);
    const lgModes = modes.filter((m) => m.driver === lg.driver);
    const best = lgModes.reduce((a, b) => (rateOf(b.name) > rateOf(a.name) ? b : a));
    const runs = modes
      .map(
        (m) =>
          `${m.name} ${rates.get(m.name)!.map(Math.round).join(", ")}/s (its Python process using ${median(driverCpu.get(m.name)!).toFixed(2)} cores)`,
      )
      .join("; ");

    const versions = `LangGraph side: ${describeVersions(lg.hello.versions)}; SQLite ${lg.hello.store.sqlite}, journal_mode=${lg.hello.store.journal_mode}, synchronous=${lg.hello.store.synchronous} (2 = FULL: every commit synced). Parkway side: ${describeVersions(pw.hello.versions)}.`;
    const turns =
      `Same scripted turns on both sides (bench/servers/langgraph_hitl.py), each on a fresh thread / session, no LLM: ` +
      `user message → the model's call of bench_noop → confirmation asked (LangGraph: interrupt() in the tool node, ` +
      `invoke with durability="sync" on SqliteSaver, one file; Parkway: the compiled server on LevelDB, the scripted model ` +
      `in the benchmark process over HTTP, read by the Python asyncio client) → confirmed (Command(resume=…) / confirm) → the ` +
      `tool runs → the model ends the turn. LangGraph runs in its Python process; Parkway's session creation and attach are ` +
      `not timed (LangGraph's thread needs neither).`;
    const lgPark = summarize(lgSide.park);
    const pwPark = summarize(pwSide.park);
    const rows: Row[] = [
      row(
        {
          id: "langgraph.park",
          name: "Durable park vs LangGraph interrupt() on SQLite (Python, same turns)",
          unit: "us",
          parkway: latency("user message sent → REQUIRE_USER_CONFIRM at the Python client", pwPark),
          baseline: latency(
            "LangGraph invoke → interrupt returned, SqliteSaver, durability sync",
            lgPark,
          ),
          note:
            `Target: Parkway p50 ≤ 0.5 × LangGraph's. ${turns} ${lgSide.park.length} turns per side after ` +
            `${config.warmup} warm-up, in rounds of ${ROUND}, the sides alternating. ${disk} ${versions} ${machine()}`,
        },
        { maxRatio: 0.5, text: "p50 ≤ 0.5× LangGraph SQLite" },
      ),
      row({
        id: "langgraph.resume",
        name: "Resume vs LangGraph Command(resume=…) on SQLite (Python, same turns)",
        unit: "us",
        parkway: latency("confirm sent → REPLY_END at the Python client", summarize(pwSide.resume)),
        baseline: latency(
          "LangGraph invoke(Command(resume)) → finished state, SqliteSaver, durability sync",
          summarize(lgSide.resume),
        ),
        note:
          `Reported. The same turns as langgraph.park, resumed right after they parked (Parkway: the session stays ` +
          `attached; its tool call and second model call go through the server and the scripted model over HTTP). ${disk} ${machine()}`,
      }),
      row(
        {
          id: `langgraph.resumes.${workers}`,
          name: `Resumes/s, ${workers} concurrent sessions, vs LangGraph's best (SQLite)`,
          unit: "per_s",
          parkway: single(
            `confirm → REPLY_END, ${workers} asyncio tasks on one Python client, median of ${reps}`,
            rateOf("Parkway"),
          ),
          baseline: single(`${best.name}, median of ${reps}`, rateOf(best.name)),
          note:
            `Target: ≥ 5× LangGraph's best. Each mode runs ${warmRounds} untimed round${warmRounds === 1 ? "" : "s"} first. Per round, ${sessions} turns parked first (not timed), then resumed by ${workers} ` +
            `concurrent workers each taking the next one; resumes ÷ wall time from the first resume to the last. LangGraph ` +
            `tried two ways, the faster counts: ${workers} asyncio tasks on AsyncSqliteSaver (aiosqlite, one connection, ` +
            `ainvoke) and ${workers} threads on SqliteSaver (one connection shared, its lock). Runs: ${runs}. Parkway server ` +
            `CPU during its resumes: ${median(serverCores).toFixed(2)} cores, ${Math.round(median(serverPerResume))} µs per resume (every thread). The modes alternate, the order rotating each ` +
            `repetition. ${machine()}`,
        },
        { minRatio: 5, text: "≥ 5× LangGraph's best" },
      ),
    ];
    return rows;
  } finally {
    for (const d of drivers) await d.close();
    await stack.close();
  }
}

/** Park and resume on PostgreSQL: LangGraph's PostgresSaver against Parkway on PostgreSQL. */
async function postgresRows(
  config: BenchConfig,
  python: string,
  pg: BenchPostgres,
  machine: () => string,
): Promise<Row[]> {
  const lgUrl = await pg.createDatabase("langgraph_checkpoints");
  const pwUrl = await pg.createDatabase("parkway_langgraph");
  const stack: Stack = await startStack(config, { databaseUrl: pwUrl, profile: "langgraph-pg" });
  const drivers: Driver[] = [];
  try {
    const lg = await Driver.start("LangGraph (PostgreSQL)", python, {
      target: "langgraph",
      postgres: lgUrl,
    });
    drivers.push(lg.driver);
    const pw = await Driver.start("Parkway on PostgreSQL (Python client)", python, {
      target: "parkway",
      address: stack.parkway.ready.address,
    });
    drivers.push(pw.driver);
    const [lgSide, pwSide] = (await measureLatencies(config, [lg.driver, pw.driver])) as [
      Side,
      Side,
    ];
    const common =
      `One temporary PostgreSQL cluster (fsync on, synchronous_commit=${lg.hello.store.synchronous_commit}), a database ` +
      `per side. LangGraph: PostgresSaver on one psycopg connection (autocommit, as from_conn_string opens it), durability ` +
      `sync; Parkway: the compiled server with --database-url (pool of 4). Same turns and rounds as langgraph.park; ` +
      `${lgSide.park.length} turns per side after ${config.warmup} warm-up. ${machine()}`;
    return [
      row({
        id: "langgraph.pg.park",
        name: "Durable park on PostgreSQL vs LangGraph interrupt() on PostgresSaver",
        unit: "us",
        parkway: latency(
          "user message sent → REQUIRE_USER_CONFIRM at the Python client",
          summarize(pwSide.park),
        ),
        baseline: latency(
          "LangGraph invoke → interrupt returned, PostgresSaver",
          summarize(lgSide.park),
        ),
        note: `Reported. ${common}`,
      }),
      row({
        id: "langgraph.pg.resume",
        name: "Resume on PostgreSQL vs LangGraph Command(resume=…) on PostgresSaver",
        unit: "us",
        parkway: latency("confirm sent → REPLY_END at the Python client", summarize(pwSide.resume)),
        baseline: latency(
          "LangGraph invoke(Command(resume)) → finished state, PostgresSaver",
          summarize(lgSide.resume),
        ),
        note: `Reported. ${common}`,
      }),
    ];
  } finally {
    for (const d of drivers) await d.close();
    await stack.close();
  }
}

export async function langgraphRows(config: BenchConfig): Promise<Row[]> {
  const load0 = loadavg()[0]!;
  await ensureBuilt();
  const venv = await ensureVenv();
  const machine = () =>
    `${cpus().length} cores (${describeCores()}; the running side's Python process, LangGraph inside it, on the ` +
    `load side; PostgreSQL for the pg rows on the server side), and whatever ` +
    `else runs on the machine; the idle side waits. Load average ${load0.toFixed(2)} when the suite started, ` +
    `${loadavg()[0]!.toFixed(2)} when this row was written. Virtual environment ${venv.dir}` +
    `${venv.installed ? " (installed by this run)" : " (reused)"}.`;
  const rows = await sqliteRows(config, venv.python, machine);
  let pg: BenchPostgres | undefined;
  try {
    pg = await startBenchPostgres();
  } catch (err) {
    process.stderr.write(
      `bench: langgraph: no PostgreSQL cluster, the langgraph.pg rows are left out: ${(err as Error).message}\n`,
    );
  }
  if (pg) {
    try {
      rows.push(...(await postgresRows(config, venv.python, pg, machine)));
    } finally {
      await pg.stop();
    }
  }
  return rows;
}
