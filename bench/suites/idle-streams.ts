/**
 * Memory of attached idle streams. The Go load generator creates N sessions (then the server's
 * RSS is read after GC), attaches one Chat stream to each over 8 connections and waits for every
 * attach's acknowledgement (RSS again); the difference is what the attached streams cost. The
 * baseline is the bare grpc-js echo holding N idle bidi streams opened the same way (one
 * ClientEvent each, answered with a copy of Parkway's attach acknowledgement). Before and while the
 * streams are attached, a user message goes to another session on a stream of its own, again and
 * again: what an input costs with N sessions in memory against none.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Child, Memory } from "../lib/child.js";
import type { BenchConfig } from "../lib/config.js";
import { encodedSize } from "../lib/echo-service.js";
import { attachRaw, caseOf, clientEvent, EventStream } from "../lib/event-stream.js";
import { buildLoad, startLoad } from "../lib/go-load.js";
import { type Row, row, single } from "../lib/rows.js";
import { summarize } from "../lib/stats.js";
import { pingParkway } from "./input-latency.js";
import { startEcho, startStack } from "../lib/stack.js";
import { ServerEvent } from "../../src/generated/parkway/v1/events.js";

const CONNS = 8;
const MB = 2 ** 20;

interface Held {
  before: Memory;
  after: Memory;
  attachSeconds: number;
}

/**
 * User messages timed on a session of their own before and while the idle streams are attached
 * (fewer in a smoke run), after a warm-up.
 */
const PINGS = 300;
const PING_WARMUP = 30;

/**
 * Runs an idle mode of the load generator, reading `memory()` before and after attaching (and
 * calling `snapshot`, when given, right after each reading).
 */
async function hold(
  bin: string,
  args: string[],
  memory: () => Promise<Memory>,
  snapshot?: (phase: string) => Promise<unknown>,
  measure?: (phase: "before" | "after") => Promise<void>,
): Promise<Held> {
  const load = startLoad(bin, args);
  try {
    await load.next();
    const before = await memory();
    await snapshot?.("before");
    await measure?.("before");
    load.advance();
    const attached = await load.next<{ seconds: number }>();
    const after = await memory();
    await snapshot?.("after");
    await measure?.("after");
    load.advance();
    await load.done;
    return { before, after, attachSeconds: attached.seconds };
  } catch (err) {
    load.kill();
    throw err;
  }
}

/** When profiling: heap snapshots of `child` into the profile folder `name`. */
function snapshots(config: BenchConfig, name: string, child: Child<unknown>) {
  if (!config.profileDir) return undefined;
  const dir = path.join(config.profileDir, name);
  return async (phase: string) => {
    await mkdir(dir, { recursive: true });
    await child.call("heapSnapshot", path.join(dir, `${phase}.heapsnapshot`));
  };
}

export async function idleStreams(config: BenchConfig): Promise<Row[]> {
  const n = config.idleStreams;
  const count = Math.min(PINGS, config.iterations);
  const warmup = Math.min(PING_WARMUP, config.warmup);
  const bin = await buildLoad(path.join(config.scratch, "bin"));
  const stack = await startStack(config, { profile: "idle-streams" });
  const echo = await startEcho();
  try {
    const session = await stack.client.createSession({ agentId: "bench" });
    const probe = new EventStream(stack.client.agentService.chat());
    probe.send(
      clientEvent(session.id, { $case: "attach", value: { sessionId: session.id, afterSeq: 0 } }),
    );
    const [ack] = await probe.until((e) => caseOf(e) === "inputAck");
    probe.close();
    const streams = ["-streams", String(n), "-conns", String(CONNS)];
    const pings: Record<"before" | "after", number[]> = { before: [], after: [] };
    const parkway = await hold(
      bin,
      ["-addr", stack.parkway.ready.address, ...streams, "idle-parkway"],
      () => stack.parkway.call<Memory>("memory"),
      snapshots(config, "idle-streams", stack.parkway),
      async (phase) => {
        const pinged = await stack.client.createSession({ agentId: "bench" });
        const stream = await attachRaw(stack.client.agentService, pinged.id);
        for (let i = 0; i < warmup + count; i++) {
          const ping = await pingParkway(stream, pinged.id);
          if (i >= warmup) pings[phase].push(ping.start - ping.sent);
        }
        stream.close();
      },
    );
    const template = Buffer.from(ServerEvent.encode(ack!.event).finish()).toString("base64");
    const bare = await hold(
      bin,
      ["-addr", echo.ready.address, ...streams, "-template", template, "idle-echo"],
      () => echo.call<Memory>("memory"),
      snapshots(config, "idle-streams-bare", echo),
    );
    const perStream = (h: Held) => (h.after.rss - h.before.rss) / n / 1024;
    const heap = (h: Held) => (h.after.heapUsed - h.before.heapUsed) / n / 1024;
    const anon = (h: Held) => (h.after.rssAnon - h.before.rssAnon) / n / 1024;
    const mb = (v: number) => `${(v / MB).toFixed(1)} MB`;
    const withIdle = summarize(pings.after);
    const without = summarize(pings.before);
    return [
      row(
        {
          id: "idle.memory",
          name: `Memory of ${n.toLocaleString("en-US")} attached idle streams`,
          unit: "kb",
          parkway: single("server RSS growth per attached stream", perStream(parkway)),
          baseline: single("bare grpc-js, per idle bidi stream", perStream(bare)),
          note:
            `${n} streams over ${CONNS} HTTP/2 connections from the Go load generator; RSS after GC. ` +
            `Parkway ${mb(parkway.before.rss)} → ${mb(parkway.after.rss)} (anonymous +${anon(parkway).toFixed(1)} KB/stream, JS heap +${heap(parkway).toFixed(1)} KB/stream), ` +
            `bare ${mb(bare.before.rss)} → ${mb(bare.after.rss)} (anonymous +${anon(bare).toFixed(1)} KB/stream, JS heap +${heap(bare).toFixed(1)} KB/stream). ` +
            `Attaching took ${parkway.attachSeconds.toFixed(1)} s (Parkway) and ${bare.attachSeconds.toFixed(1)} s (bare). ` +
            `Attach acknowledgement ${encodedSize(ack!.event)} B. ` +
            `A user message to another session (on a stream of its own, ${count} after ${warmup} of warm-up, each reply ending before the next): ` +
            `REPLY_START at p50 ${Math.round(withIdle.p50)} µs / p99 ${Math.round(withIdle.p99)} µs with the ${n} sessions in memory, ` +
            `${Math.round(without.p50)} µs / ${Math.round(without.p99)} µs before they attached (${(withIdle.p50 / without.p50).toFixed(2)}×).`,
        },
        { maxRatio: 1.5, text: "≤ 1.5× bare" },
      ),
    ];
  } finally {
    await echo.close();
    await stack.close();
  }
}
