/**
 * One parked reply, timed as the park rows measure it: from the moment the model's last byte (the
 * SSE `[DONE]`) is handed to Parkway's socket (the timing proxy) to REQUIRE_USER_CONFIRM at the
 * client; and where the server's synced write falls in it (store operations timed on the same
 * clock). Shared by the LevelDB and PostgreSQL park rows.
 */
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import type { BenchConfig } from "./config.js";
import {
  attachRaw,
  caseOf,
  clientEvent,
  echoClient,
  type EventStream,
  openEcho,
} from "./event-stream.js";
import { BARE_PARK_KEYS } from "./echo-service.js";
import { startEcho, type Stack } from "./stack.js";
import { mergeOps, type OpTimes } from "./store-times.js";
import type { TimingProxy } from "./timing-proxy.js";

const PER_ROUND = 50;

/** One park, on the monotonic clock (µs). */
export interface Park {
  modelDone: number;
  requireAt: number;
  parkedAt: number;
  require: ServerEvent;
  /** Its REPLY_PARKED and REPLY_END (the interrupt's), as they came. */
  parked: ServerEvent;
  ended: ServerEvent;
}

/** The stages of a park: where the server's synced write falls in it. */
export const PARK_STAGES = [
  "model done → synced write starts (SSE end, tool call, permission check, earlier writes)",
  "of which unsynced writes of the turn's last events",
  "synced write",
  "of which earlier writes still in flight when it was issued",
  "write done → REQUIRE_USER_CONFIRM at the client (fan-out, gRPC out)",
] as const;

/** The µs of each of `PARK_STAGES` in one park, when its synced write is among `ops`. */
export function parkStages(p: Park, ops: OpTimes): number[] | undefined {
  const sync = ops.write_sync?.find(([s]) => s >= p.modelDone && s <= p.requireAt);
  if (!sync) return undefined;
  const earlier = (ops.write ?? []).filter(([s, e]) => s >= p.modelDone && e <= sync[0]);
  const writing = earlier.reduce((sum, [s, e]) => sum + (e - s), 0);
  // Writes issued before it and not done yet: the synced write waits at least until they are.
  const inFlight = (ops.write ?? [])
    .filter(([s, e]) => s < sync[0] && e > sync[0])
    .reduce((most, [, e]) => Math.max(most, Math.min(e, sync[1]) - sync[0]), 0);
  const synced = sync[1] - sync[0];
  return [sync[0] - p.modelDone, writing, synced, inFlight, p.requireAt - sync[1]];
}

/** One parked reply: times from the model's last byte; then interrupts it and waits for its end. */
export async function parkOnce(
  stream: EventStream,
  sessionId: string,
  proxy: TimingProxy,
): Promise<Park> {
  const before = proxy.lastByteAt.length;
  stream.send(
    clientEvent(sessionId, { $case: "userMessage", value: { text: "park", content: [] } }),
  );
  const events = await stream.until((e) => caseOf(e) === "replyParked");
  const require = events.find((a) => caseOf(a.event) === "requireUserConfirm");
  const parked = events[events.length - 1]!;
  const modelDone = proxy.lastByteAt[proxy.lastByteAt.length - 1];
  if (!require || modelDone === undefined || proxy.lastByteAt.length !== before + 1) {
    throw new Error("park: expected one model response and one REQUIRE_USER_CONFIRM");
  }
  stream.send(clientEvent(sessionId, { $case: "userInterrupt", value: { replyId: "" } }));
  const ended = await stream.until((e) => caseOf(e) === "replyEnd");
  return {
    modelDone,
    requireAt: require.at,
    parkedAt: parked.at,
    require: require.event,
    parked: parked.event,
    ended: ended[ended.length - 1]!.event,
  };
}

/** What `measureParks` measured (µs; warm-up left out). */
export interface ParkRounds {
  /** Model's last byte → REQUIRE_USER_CONFIRM. */
  parked: number[];
  /** Model's last byte → REPLY_PARKED. */
  parkedEnd: number[];
  /** The bare echo round trip. */
  echoed: number[];
  /** Model's last byte → REQUIRE_USER_CONFIRM through the bare park (when it ran). */
  bare: number[];
  /** Each baseline's samples, by name. */
  baselines: Record<string, number[]>;
  /** Samples of each of `PARK_STAGES`. */
  stages: number[][];
  /** The server's store operations during the parks. */
  store: OpTimes;
  /** The first REQUIRE_USER_CONFIRM (the echo's answer). */
  template: ServerEvent;
}

/**
 * Parks on `stack` (started with the timing proxy), the bare echo round trip (answering with a copy
 * of the REQUIRE_USER_CONFIRM) and each baseline (`n` samples in µs per call), alternating in
 * rounds of 50 so load on the shared machine falls on each alike; `config.warmup` samples of each
 * are left out.
 */
export async function measureParks(
  config: BenchConfig,
  stack: Stack,
  baselines: Record<string, (n: number) => Promise<number[]> | number[]>,
  /** The bare park's address (bench/servers/bare-park.ts), calling the model through the proxy. */
  bareAddress?: string,
): Promise<ParkRounds> {
  const echoServer = await startEcho();
  const echo = echoClient(echoServer.ready.address);
  const bareClient = bareAddress ? echoClient(bareAddress) : undefined;
  const out: Omit<ParkRounds, "template"> = {
    parked: [],
    parkedEnd: [],
    echoed: [],
    bare: [],
    baselines: Object.fromEntries(Object.keys(baselines).map((name) => [name, []])),
    stages: PARK_STAGES.map(() => []),
    store: {},
  };
  let template: ServerEvent | undefined;
  try {
    const total = config.iterations + config.warmup;
    for (let done = 0; done < total;) {
      const n = Math.min(PER_ROUND, total - done);
      const keep = (i: number) => done + i >= config.warmup;
      const session = await stack.client.createSession({ agentId: "bench" });
      const stream = await attachRaw(stack.client.agentService, session.id);
      await stack.parkway.call("storeTimes");
      const round: Park[] = [];
      let first: Park | undefined;
      for (let i = 0; i < n; i++) {
        const sample = await parkOnce(stream, session.id, stack.proxy!);
        template ??= sample.require;
        first ??= sample;
        if (keep(i)) round.push(sample);
      }
      const ops = await stack.parkway.call<OpTimes>("storeTimes");
      mergeOps(out.store, ops);
      for (const p of round) {
        out.parked.push(p.requireAt - p.modelDone);
        out.parkedEnd.push(p.parkedAt - p.modelDone);
        parkStages(p, ops)?.forEach((us, k) => out.stages[k]!.push(us));
      }
      stream.close();
      const echoStream = openEcho(echo, template!);
      for (let i = 0; i < n; i++) {
        const t0 = echoStream.send(
          clientEvent(session.id, { $case: "userMessage", value: { text: "park", content: [] } }),
        );
        const answer = await echoStream.next();
        if (keep(i)) out.echoed.push(answer.at - t0);
      }
      echoStream.close();
      if (bareClient && first) {
        const [require, parked, ended] = BARE_PARK_KEYS;
        const bareStream = openEcho(bareClient, first.require, {
          [require!]: first.require,
          [parked!]: first.parked,
          [ended!]: first.ended,
        });
        for (let i = 0; i < n; i++) {
          const p = await parkOnce(bareStream, session.id, stack.proxy!);
          if (keep(i)) out.bare.push(p.requireAt - p.modelDone);
        }
        bareStream.close();
      }
      for (const [name, sample] of Object.entries(baselines)) {
        const got = await sample(n);
        out.baselines[name]!.push(...got.filter((_, i) => keep(i)));
      }
      done += n;
    }
  } finally {
    echo.close();
    bareClient?.close();
    await echoServer.close();
  }
  return { ...out, template: template! };
}
