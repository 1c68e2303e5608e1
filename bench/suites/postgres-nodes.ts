/**
 * Several nodes on one PostgreSQL database (see bench/lib/cross-node.ts): the cross-node delivery
 * delay against a bare NOTIFY → LISTEN delivery plus a SELECT round trip, and streamed text deltas
 * of three sessions spread over three nodes against the same three sessions on one node.
 */
import path from "node:path";
import type { BenchConfig } from "../lib/config.js";
import { crossNodeDelays, notifyRoundTrips, spreadRate, startNodes } from "../lib/cross-node.js";
import { buildLoad } from "../lib/go-load.js";
import { PACED_DELTAS, PACED_MS } from "../lib/model.js";
import type { BenchPostgres } from "../lib/postgres-cluster.js";
import { latency, type Row, row, single } from "../lib/rows.js";
import { median, summarize } from "../lib/stats.js";

const us = (v: number) => `${Math.round(v)} µs`;

export async function nodeRows(config: BenchConfig, pg: BenchPostgres): Promise<Row[]> {
  const bin = await buildLoad(path.join(config.scratch, "bin"));
  const replies = config.smoke ? 2 : 20;
  const reps = config.smoke ? 1 : 3;
  const sessions = 3;
  const spreadReplies = Math.max(1, Math.round(config.singleSessionReplies / 2));

  const delayUrl = await pg.createDatabase("parkway_cross_node");
  const pair = await startNodes(config, delayUrl, 2);
  let delays: number[];
  let notify: number[];
  try {
    await crossNodeDelays(pair[0]!, pair[1]!, 1); // warm-up
    delays = await crossNodeDelays(pair[0]!, pair[1]!, replies);
    notify = await notifyRoundTrips(delayUrl, Math.max(20, Math.min(400, delays.length)));
  } finally {
    for (const node of pair) await node.close();
  }

  const one: number[] = [];
  const three: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    for (const count of rep % 2 === 0 ? [1, 3] : [3, 1]) {
      const url = await pg.createDatabase(`parkway_spread_${rep}_${count}`);
      const nodes = await startNodes(config, url, count);
      try {
        await spreadRate(bin, nodes, nodes.length, 1); // warm-up
        const rate = await spreadRate(bin, nodes, sessions, spreadReplies);
        (count === 1 ? one : three).push(rate);
      } finally {
        for (const node of nodes) await node.close();
      }
    }
  }

  const d = summarize(delays);
  const n = summarize(notify);
  return [
    row({
      id: "pg.cross_node",
      name: "Cross-node delivery: an event on a stream attached to node B after node A's own stream",
      unit: "us",
      parkway: latency("event at B − same event at A, node A running the reply", d),
      baseline: latency("bare NOTIFY → LISTEN delivery + SELECT round trip, same database", n),
      note:
        `${replies} replies of ${PACED_DELTAS} text deltas ${PACED_MS} ms apart (a steady stream: neither stream has a backlog) ` +
        `run on node A (compiled, one of two nodes on the database), ` +
        `one stream attached to each node. Node A hands its streams the model's events as it shows them, ahead of their write; ` +
        `node B reads them by seq when node A's NOTIFY arrives after the write (one notification per write, the events of one write read at once), ` +
        `so the difference includes node A's commit. ` +
        `${d.n} events compared; p50 ${us(d.p50)} against ${us(n.p50)} for the bare notification and read.`,
    }),
    row({
      id: "pg.stream.3nodes",
      name: "Streamed text deltas, 3 sessions spread over 3 nodes vs the same on 1 node",
      unit: "per_s",
      parkway: single(
        `TEXT_BLOCK_DELTA/s summed over the 3 nodes, median of ${reps}`,
        median(three),
      ),
      baseline: single(`3 sessions on 1 node, same run, median of ${reps}`, median(one)),
      note:
        `Runs: 3 nodes ${three.map(Math.round).join(", ")}/s; 1 node ${one.map(Math.round).join(", ")}/s; ` +
        `${spreadReplies} replies × ${config.streamDeltas} deltas per session, one Go generator per node at once, each node a ` +
        `compiled server with its own scripted model, all on one PostgreSQL database, a fresh one per run. On this 2-core machine ` +
        `the nodes, the database, the models and the generators share the same two cores, so three nodes measure the cost of ` +
        `the coordination (leases, signals, reads by seq), not added capacity.`,
    }),
  ];
}
