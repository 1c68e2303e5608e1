/**
 * Several Parkway nodes on one PostgreSQL database:
 * - the cross-node delivery delay: one reply runs on node A while a stream on A and a stream on B
 *   follow its session; for each event, the time it reached B after it reached A (node A hands its
 *   own streams the events it stored; node B learns of them from a NOTIFY and reads them by seq),
 *   against a bare NOTIFY → LISTEN delivery plus a SELECT round trip on the same database. The
 *   reply streams at a steady pace (the "paced" turn), so that neither stream has a backlog: with
 *   deltas as fast as the model can, the client reading A's stream falls behind, and B (reading many
 *   events at once) can be ahead of it, which says nothing about delivery;
 * - streamed text deltas with the sessions spread over three nodes against the same sessions on
 *   one node (the Go generator, one process per node, run at the same time).
 */
import pg from "pg";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import type { BenchConfig } from "./config.js";
import { runLoad } from "./go-load.js";
import { type Stack, startStack } from "./stack.js";
import { nowUs } from "./stats.js";

/** Starts `n` nodes of the compiled server on the database at `url`. */
export async function startNodes(config: BenchConfig, url: string, n: number): Promise<Stack[]> {
  const nodes: Stack[] = [];
  try {
    for (let i = 0; i < n; i++) {
      nodes.push(await startStack(config, { compiled: true, databaseUrl: url }));
    }
  } catch (err) {
    for (const node of nodes) await node.close();
    throw err;
  }
  return nodes;
}

/**
 * Runs `replies` replies on node `a` with a stream on `a` and one on `b`; returns, for each event
 * both received, the µs it reached B after A.
 */
export async function crossNodeDelays(a: Stack, b: Stack, replies: number): Promise<number[]> {
  const session = await a.client.createSession({ agentId: "bench" });
  const here = await a.client.attach(session.id);
  const there = await b.client.attach(session.id);
  const atA = new Map<number, number>();
  const atB = new Map<number, number>();
  /** Reads `stream` until it has seen `ends` more REPLY_ENDs, noting when each seq arrived. */
  const follow = async (stream: typeof here, into: Map<number, number>, ends: number) => {
    while (ends > 0) {
      const e: ServerEvent | undefined = await stream.next(AbortSignal.timeout(60_000));
      if (!e) throw new Error("a stream ended before its replies did");
      if (e.seq > 0) into.set(e.seq, nowUs());
      if (e.event?.$case === "replyEnd") ends--;
    }
  };
  try {
    const watching = follow(there, atB, replies);
    for (let i = 0; i < replies; i++) {
      await here.send({ $case: "userMessage", value: { text: "paced", content: [] } });
      await follow(here, atA, 1);
    }
    await watching;
  } finally {
    here.close();
    there.close();
  }
  const delays: number[] = [];
  for (const [seq, t] of atA) {
    const other = atB.get(seq);
    if (other !== undefined) delays.push(other - t);
  }
  return delays;
}

/**
 * `n` deliveries of a bare notification on `url`, each timed from its `pg_notify` statement to its
 * arrival on another connection that LISTENs, followed by a `SELECT` round trip there (what a node
 * does to learn of an event and read it); µs each.
 */
export async function notifyRoundTrips(url: string, n: number): Promise<number[]> {
  const listener = new pg.Client({ connectionString: url, application_name: "parkway-bench" });
  const sender = new pg.Client({ connectionString: url, application_name: "parkway-bench" });
  listener.on("error", () => undefined);
  sender.on("error", () => undefined);
  await listener.connect();
  await sender.connect();
  const out: number[] = [];
  try {
    await listener.query("LISTEN bench_signal");
    for (let i = 0; i < n; i++) {
      const arrived = new Promise<void>((resolve) =>
        listener.once("notification", () => resolve()),
      );
      const t0 = nowUs();
      await sender.query("SELECT pg_notify('bench_signal', $1)", [String(i)]);
      await arrived;
      await listener.query({ name: "bench-select", text: "SELECT 1" });
      out.push(nowUs() - t0);
    }
  } finally {
    await listener.end().catch(() => undefined);
    await sender.end().catch(() => undefined);
  }
  return out;
}

/**
 * TEXT_BLOCK_DELTA/s of `sessions` sessions spread over `nodes` (one generator per node, all at
 * once): the sum of their rates.
 */
export async function spreadRate(
  bin: string,
  nodes: Stack[],
  sessions: number,
  replies: number,
): Promise<number> {
  const per = nodes.map(
    (_, i) => Math.floor(sessions / nodes.length) + (i < sessions % nodes.length ? 1 : 0),
  );
  const runs = nodes.map((node, i) =>
    per[i]! === 0
      ? Promise.resolve({ rate: 0 })
      : runLoad<{ rate: number }>(bin, [
          "-addr",
          node.parkway.ready.address,
          "-streams",
          String(per[i]),
          "-conns",
          "1",
          "-replies",
          String(replies),
          "stream-parkway",
        ]),
  );
  const rates = await Promise.all(runs);
  return rates.reduce((sum, r) => sum + r.rate, 0);
}
