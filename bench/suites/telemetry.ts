/**
 * What telemetry costs. In one run the compiled server is started plain and with metrics and
 * tracing on (full run: also metrics only and tracing only), each on its own scripted model, and
 * the same workloads are measured on each, the configurations taking turns round by round (the
 * order rotating each round) so that load on the shared machine falls on each alike:
 * - input → REPLY_START, as the `input` row measures it (rounds of 50 pings on a fresh session);
 * - park (synced) acknowledged, as the `park` row measures it (timing proxy in front of the model);
 * - streamed text deltas, 1 session, as the `stream` row runs it (Go generator, no proxy).
 * Metrics: config `metrics.listen` 127.0.0.1:0 (what `--metrics-listen` sets), scraped every
 * second during the run as Prometheus would. Tracing: `OTEL_TRACES_EXPORTER=otlp` with the default
 * protocol (http/protobuf), to a small OTLP sink that answers every POST
 * /v1/traces with 200 `{}` and counts the spans it receives by name (batch delay 1 s rather than
 * the default 5 s, so spans are exported during the measurement). The sinks and the scrapers run in
 * a process of their own on the load side (bench/servers/telemetry-backend.ts), not on the event
 * loop of this process, whose clients time the servers. Each row is
 * the telemetry-on figure against the two plain servers' together in the same run (the second
 * plain server against the first is the noise floor); the server's CPU time per unit of work is
 * reported beside it.
 */
import path from "node:path";
import type { BenchConfig } from "../lib/config.js";
import { attachRaw } from "../lib/event-stream.js";
import { buildLoad, cpuSeconds, runLoad } from "../lib/go-load.js";
import { parkOnce } from "../lib/park.js";
import { latency, type Row, row, single } from "../lib/rows.js";
import { ensureBuilt, type Stack, startStack } from "../lib/stack.js";
import { median, summarize } from "../lib/stats.js";
import { type Ping, pingParkway } from "./input-latency.js";
import { benchScript, type Child, startChild } from "../lib/child.js";
import type { ScrapeStats, SinkStats } from "../servers/telemetry-backend.js";
import { describeCores } from "../lib/cores.js";

/** The telemetry backend's process (bench/servers/telemetry-backend.ts). */
type Backend = Child<unknown>;

/** Pings, or parks, per round on one configuration. */
const PER_ROUND = 50;

/** A way of running the server. */
interface Variant {
  key: "plain" | "both" | "metrics" | "tracing" | "control";
  label: string;
  metrics: boolean;
  tracing: boolean;
}

const PLAIN: Variant = { key: "plain", label: "no telemetry", metrics: false, tracing: false };
/**
 * A second plain server, measured like the others against the first: its ratios are the noise
 * floor of the run (what the same server shows against itself on this machine at this load).
 */
const CONTROL: Variant = {
  key: "control",
  label: "no telemetry either (a second plain server: the run's noise floor)",
  metrics: false,
  tracing: false,
};
const BOTH: Variant = { key: "both", label: "metrics + tracing", metrics: true, tracing: true };
const METRICS: Variant = { key: "metrics", label: "metrics only", metrics: true, tracing: false };
const TRACING: Variant = { key: "tracing", label: "tracing only", metrics: false, tracing: true };
/** A sink of the telemetry backend (bench/servers/telemetry-backend.ts). */
interface OtlpSink {
  id: number;
  /** For `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporter appends /v1/traces). */
  endpoint: string;
}

/** One configuration's server, its scraper, and what was measured on it. */
interface Running {
  variant: Variant;
  stack: Stack;
  /** Its scraper in the telemetry backend, when metrics are on. */
  scraper?: number;
}

/** What was measured on one configuration (µs; CPU in seconds of the server process). */
interface Measured {
  pings: Ping[];
  /** Each round's p50 input → REPLY_START, and park (rounds of warm-up only left out). */
  pingRounds: number[];
  parkRounds: number[];
  pingCpu: number;
  pingCount: number;
  parks: number[];
  parkCpu: number;
  parkCount: number;
  rates: number[];
  streamCpu: number;
  deltas: number;
  scrapes: number;
  scrapeFailures: number;
  metricsBytes: number;
}

/** `items` rotated left by `k`, so that each takes its turn first. */
function rotate<T>(items: readonly T[], k: number): T[] {
  const r = k % items.length;
  return [...items.slice(r), ...items.slice(0, r)];
}

async function startVariant(
  config: BenchConfig,
  backend: Backend,
  variant: Variant,
  sink: OtlpSink | undefined,
  phase: "latency" | "stream",
): Promise<Running> {
  const stack = await startStack(config, {
    compiled: true,
    proxy: phase === "latency",
    profile: `telemetry-${phase}-${variant.key}`,
    ...(variant.metrics ? { metricsListen: "127.0.0.1:0" } : {}),
    env: sink
      ? {
          OTEL_TRACES_EXPORTER: "otlp",
          OTEL_EXPORTER_OTLP_PROTOCOL: undefined, // the default, http/protobuf
          OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint,
          OTEL_BSP_SCHEDULE_DELAY: "1000",
        }
      : { OTEL_TRACES_EXPORTER: undefined },
  });
  const url = stack.parkway.ready.metricsUrl;
  if (variant.metrics && !url) throw new Error(`${variant.label}: no /metrics URL`);
  const scraper = url ? await backend.call<number>("scrape", url) : undefined;
  return { variant, stack, ...(scraper === undefined ? {} : { scraper }) };
}

async function closeAll(
  backend: Backend,
  running: Running[],
  into: Map<Variant, Measured>,
): Promise<void> {
  for (const r of running) {
    if (r.scraper !== undefined) {
      const s = await backend.call<ScrapeStats>("stopScrape", r.scraper);
      const m = into.get(r.variant)!;
      m.scrapes += s.scrapes;
      m.scrapeFailures += s.failures;
      m.metricsBytes = Math.max(m.metricsBytes, s.bytes);
    }
    await r.stack.close();
  }
}

/** CPU seconds the server used while `fn` ran, with its result. */
async function serverCpu<T>(stack: Stack, fn: () => Promise<T>): Promise<[T, number]> {
  const c0 = await cpuSeconds(stack.parkway.pid);
  const out = await fn();
  return [out, (await cpuSeconds(stack.parkway.pid)) - c0];
}

/**
 * One round of `n` pings on a fresh session; the first `skip` are left out (the server's CPU time
 * is counted for every round that is not all warm-up).
 */
async function pingRound(r: Running, m: Measured, n: number, skip: number): Promise<void> {
  const { stack } = r;
  const session = await stack.client.createSession({ agentId: "bench" });
  const stream = await attachRaw(stack.client.agentService, session.id);
  const [pings, cpu] = await serverCpu(stack, async () => {
    const out: Ping[] = [];
    for (let i = 0; i < n; i++) out.push(await pingParkway(stream, session.id));
    return out;
  });
  stream.close();
  await stack.parkway.call("storeTimes"); // the timed store's records are not needed here
  m.pings.push(...pings.slice(skip));
  if (skip < n) {
    m.pingRounds.push(median(pings.slice(skip).map((p) => p.start - p.sent)));
    m.pingCpu += cpu;
    m.pingCount += n;
  }
}

/** One round of `n` parks (each interrupted) on a fresh session; the first `skip` are left out. */
async function parkRound(r: Running, m: Measured, n: number, skip: number): Promise<void> {
  const { stack } = r;
  const session = await stack.client.createSession({ agentId: "bench" });
  const stream = await attachRaw(stack.client.agentService, session.id);
  const [parks, cpu] = await serverCpu(stack, async () => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const p = await parkOnce(stream, session.id, stack.proxy!);
      out.push(p.requireAt - p.modelDone);
    }
    return out;
  });
  stream.close();
  await stack.parkway.call("storeTimes");
  m.parks.push(...parks.slice(skip));
  if (skip < n) {
    m.parkRounds.push(median(parks.slice(skip)));
    m.parkCpu += cpu;
    m.parkCount += n;
  }
}

interface StreamRun {
  rate: number;
  count: number;
  seconds: number;
}

export async function telemetry(config: BenchConfig): Promise<Row[]> {
  await ensureBuilt();
  const bin = await buildLoad(path.join(config.scratch, "bin"));
  const variants = config.smoke ? [PLAIN, BOTH] : [PLAIN, BOTH, METRICS, TRACING, CONTROL];
  const measured = new Map<Variant, Measured>(
    variants.map((v) => [
      v,
      {
        pings: [],
        pingRounds: [],
        parkRounds: [],
        pingCpu: 0,
        pingCount: 0,
        parks: [],
        parkCpu: 0,
        parkCount: 0,
        rates: [],
        streamCpu: 0,
        deltas: 0,
        scrapes: 0,
        scrapeFailures: 0,
        metricsBytes: 0,
      },
    ]),
  );
  // The OTLP sinks and the scrapers run in a process of their own on the load side (a collector
  // and Prometheus), not on this process's event loop, where the clients time the servers.
  const backend: Backend = await startChild(benchScript("telemetry-backend.ts"), {});
  const sinks = new Map<Variant, OtlpSink>();
  const received = new Map<Variant, SinkStats>();
  // Short runs, many turns: a burst of load from elsewhere on the machine hits one run of one
  // configuration, and the median leaves it out.
  const replies = Math.max(1, Math.round(config.singleSessionReplies / 4));
  const reps = config.smoke ? 1 : 16;
  try {
    for (const v of variants) if (v.tracing) sinks.set(v, await backend.call<OtlpSink>("sink"));
    // Input and park rounds, the configurations taking turns.
    let running: Running[] = [];
    try {
      for (const v of variants)
        running.push(await startVariant(config, backend, v, sinks.get(v), "latency"));
      const total = iterations(config) + config.warmup;
      for (let done = 0, round = 0; done < total; done += PER_ROUND, round++) {
        const n = Math.min(PER_ROUND, total - done);
        const skip = Math.max(0, Math.min(n, config.warmup - done));
        for (const r of rotate(running, round)) {
          await pingRound(r, measured.get(r.variant)!, n, skip);
        }
        for (const r of rotate(running, round)) {
          await parkRound(r, measured.get(r.variant)!, n, skip);
        }
      }
    } finally {
      await closeAll(backend, running, measured);
    }
    // Streamed deltas, 1 session, on servers without the proxy.
    running = [];
    try {
      for (const v of variants) {
        running.push(await startVariant(config, backend, v, sinks.get(v), "stream"));
      }
      for (const r of running) {
        const address = r.stack.parkway.ready.address;
        await runLoad(bin, ["-addr", address, "-replies", "1", "stream-parkway"]); // warm-up
      }
      for (let rep = 0; rep < reps; rep++) {
        for (const r of rotate(running, rep)) {
          const address = r.stack.parkway.ready.address;
          const [run, cpu] = await serverCpu(r.stack, () =>
            runLoad<StreamRun>(bin, [
              ...["-addr", address, "-streams", "1", "-conns", "1"],
              ...["-replies", String(replies), "stream-parkway"],
            ]),
          );
          const m = measured.get(r.variant)!;
          m.rates.push(run.rate);
          m.streamCpu += cpu;
          m.deltas += run.count;
        }
      }
    } finally {
      await closeAll(backend, running, measured);
    }
    for (const [v, sink] of sinks)
      received.set(v, await backend.call<SinkStats>("sinkStats", sink.id));
  } finally {
    await backend.close();
  }
  return describe(config, variants, measured, received, reps, replies);
}

const us = (v: number) => `${Math.round(v)} µs`;
const x = (v: number) => `${v.toFixed(3)}×`;

/**
 * Pings and parks per configuration: three times the other rows' (24 rounds), since the
 * differences sought are a few percent.
 */
const iterations = (config: BenchConfig) => (config.smoke ? 1 : 3) * config.iterations;

const mean = (a: number[], b: number[]) => a.map((v, i) => (v + (b[i] ?? v)) / 2);

/** Two plain servers' measurements as one baseline (each round's figure their mean). */
function pooled(a: Measured, b: Measured): Measured {
  return {
    pings: [...a.pings, ...b.pings],
    pingRounds: mean(a.pingRounds, b.pingRounds),
    parkRounds: mean(a.parkRounds, b.parkRounds),
    pingCpu: a.pingCpu + b.pingCpu,
    pingCount: a.pingCount + b.pingCount,
    parks: [...a.parks, ...b.parks],
    parkCpu: a.parkCpu + b.parkCpu,
    parkCount: a.parkCount + b.parkCount,
    rates: mean(a.rates, b.rates),
    streamCpu: a.streamCpu + b.streamCpu,
    deltas: a.deltas + b.deltas,
    scrapes: 0,
    scrapeFailures: 0,
    metricsBytes: 0,
  };
}

function describe(
  config: BenchConfig,
  variants: Variant[],
  measured: Map<Variant, Measured>,
  sinks: Map<Variant, SinkStats>,
  reps: number,
  replies: number,
): Row[] {
  const first = measured.get(PLAIN)!;
  const second = measured.get(CONTROL);
  // A configuration with telemetry is measured against both plain servers together: one plain
  // server alone can sit a few percent off the other for the whole run (the control row shows by
  // how much), and that would count for or against telemetry.
  const both = second ? pooled(first, second) : first;
  const rows: Row[] = [];
  const n = iterations(config);
  const order = `The ${variants.length} configurations (${variants.map((v) => v.label).join(", ")}) ran in the same run, compiled, each on its own scripted model, taking turns in rounds of ${PER_ROUND} with the order rotating each round`;
  for (const v of variants) {
    if (v === PLAIN) continue;
    const m = measured.get(v)!;
    const plain = v === CONTROL ? first : both;
    const against =
      v === CONTROL || !second
        ? "the same, no telemetry, same run"
        : "the same on the two plain servers together, same run";
    const target = v === BOTH;
    const sink = sinks.get(v);
    const spans = sink
      ? `Spans the OTLP sink received (whole run): ${[...sink.spans]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([name, count]) => `${name} ${count}`)
          .join(
            ", ",
          )}, in ${sink.exports} exports (${Math.round(sink.bytes / 1024)} KB of protobuf). `
      : "";
    const scraped = v.metrics
      ? `/metrics scraped every second: ${m.scrapes} scrapes (${m.scrapeFailures} failed), ${Math.round(m.metricsBytes / 1024)} KB each. `
      : "";
    const what = `${spans}${scraped}`;
    // Each round of a configuration against plain's round of the same turn: load that comes and
    // goes on the machine falls on both sides of each ratio.
    const rounds = (mine: number[], theirs: number[]) =>
      `median of the ${mine.length} per-round p50 ratios (each round against plain's round of the same turn) ${x(median(mine.map((v, i) => v / theirs[i]!)))}`;
    const cpuRatio = (a: number, an: number, b: number, bn: number) =>
      `server CPU per unit ${us((a / an) * 1e6)} vs ${us((b / bn) * 1e6)} plain (${x(a / an / (b / bn))})`;

    const pi = summarize(m.pings.map((p) => p.start - p.sent));
    const pp = summarize(plain.pings.map((p) => p.start - p.sent));
    const ai = summarize(m.pings.map((p) => p.ack - p.sent));
    const ap = summarize(plain.pings.map((p) => p.ack - p.sent));
    rows.push(
      row(
        {
          id: `telemetry.input.${v.key}`,
          name: `Input → REPLY_START with ${v.label} / without`,
          unit: "us",
          parkway: latency(`user message → REPLY_START, ${v.label}`, pi),
          baseline: latency(against, pp),
          note:
            `${rounds(m.pingRounds, plain.pingRounds)}; p99 ratio ${x(pi.p99 / pp.p99)}; input_ack p50 ${us(ai.p50)} vs ${us(ap.p50)} (${x(ai.p50 / ap.p50)}). ` +
            `Per ping (the whole short reply: REPLY_START, one model call, REPLY_END) ${cpuRatio(m.pingCpu, m.pingCount, plain.pingCpu, plain.pingCount)}. ` +
            `${n} pings each after ${config.warmup} of warm-up. ${order}. ${what}`,
        },
        target ? { maxRatio: 1.05, text: "≤ 1.05× (a few percent)" } : undefined,
      ),
    );

    const kp = summarize(m.parks);
    const kq = summarize(plain.parks);
    rows.push(
      row(
        {
          id: `telemetry.park.${v.key}`,
          name: `Park (synced) acknowledged with ${v.label} / without`,
          unit: "us",
          parkway: latency(`model's last byte → REQUIRE_USER_CONFIRM, ${v.label}`, kp),
          baseline: latency(against, kq),
          note:
            `${rounds(m.parkRounds, plain.parkRounds)}; p99 ratio ${x(kp.p99 / kq.p99)}. Per park (message, model call, synced park, interrupt, REPLY_END) ${cpuRatio(m.parkCpu, m.parkCount, plain.parkCpu, plain.parkCount)}. ` +
            `${n} parks each after ${config.warmup} of warm-up, timing proxy in front of each model. ${order}.`,
        },
        target ? { maxRatio: 1.05, text: "≤ 1.05× (a few percent)" } : undefined,
      ),
    );

    const rate = median(m.rates);
    const base = median(plain.rates);
    const paired = median(m.rates.map((r, i) => r / plain.rates[i]!));
    rows.push(
      row(
        {
          id: `telemetry.stream.${v.key}`,
          name: `Streamed text deltas, 1 session, with ${v.label} / without`,
          unit: "per_s",
          parkway: single(`TEXT_BLOCK_DELTA/s, ${v.label}, median of ${reps}`, rate),
          baseline: single(`the same, no telemetry, median of ${reps}`, base),
          note:
            `Time per delta ${x(base / rate)} plain's; median of the per-run ratios (each run against plain's run of the same turn) ${x(paired)}. Runs: ${m.rates.map(Math.round).join(", ")}/s; plain ${plain.rates.map(Math.round).join(", ")}/s. ` +
            `Per delta ${cpuRatio(m.streamCpu, m.deltas, plain.streamCpu, plain.deltas)}. ` +
            `Go client, 1 session × ${replies} replies × ${config.streamDeltas} deltas per run, the configurations alternating run by run (order rotating), no proxy; ${describeCores()}.`,
        },
        target ? { minRatio: 0.95, text: "≥ 0.95× (time per delta ≤ 1.05×)" } : undefined,
      ),
    );
  }
  return rows;
}
