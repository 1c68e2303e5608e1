import { writeFile } from "node:fs/promises";
import { credentials } from "@grpc/grpc-js";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { AgentServiceClient } from "../../src/generated/parkway/v1/agent_service.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { startScriptedModel, type ScriptedModelServer } from "../../src/model/scripted/index.js";
import { allEvents, collect, kind } from "../helpers/parkway-harness.js";
import { freePort } from "../helpers/free-port.js";
import { sample, storeReads as reads } from "../helpers/store-reads.js";
import { startPostgres, type TestPostgres } from "../helpers/postgres.js";
import { type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";

/**
 * Two nodes on one database: a node that created a session or let it go keeps its actor, and uses
 * it again only when the lease comes back to it untouched by another node; an input applied on the
 * node a stream is attached to is acknowledged after its events.
 */
let postgres: TestPostgres;
let model: ScriptedModelServer;
const nodes: { server: SpawnedServer; client: ParkwayClient; metrics: string }[] = [];
beforeAll(async () => {
  postgres = await startPostgres();
  model = await startScriptedModel({ script: { turns: [{ text: "noted", repeat: true }] } });
  const root = await tempDir("parkway-dormant-");
  const config = path.join(root, "parkway.json");
  await writeFile(
    config,
    JSON.stringify({
      model: { url: model.url, name: "scripted", maxRetries: 0 },
      // A long lease: the inbox's polls (a quarter of it, at most a second) stay out of the counts.
      database: { url: await postgres.createDatabase(), leaseTimeout: "10s" },
      agents: [{ id: "test", workingDirectories: [path.join(root, "work")] }],
    }),
  );
  for (const name of ["a", "b"]) {
    const port = await freePort();
    const server = await spawnServer({
      dataDir: path.join(root, `unused-${name}`),
      direct: true,
      args: ["--config", config, "--metrics-listen", `127.0.0.1:${port}`],
    });
    const client = createParkwayClient(server.address);
    nodes.push({ server, client, metrics: `http://127.0.0.1:${port}/metrics` });
  }
}, 120_000);
afterAll(async () => {
  for (const n of nodes) n.client.close();
  await Promise.all(nodes.map((n) => n.server.stop()));
  await model?.close();
  await postgres?.stop();
});

/** Sends `text` on `client` and returns the reply's events, once its node has let it go. */
async function say(client: ParkwayClient, sessionId: string, text: string): Promise<ServerEvent[]> {
  const { lastSeq } = await client.getSession(sessionId);
  const chat = await client.attach(sessionId, { afterSeq: lastSeq });
  const events = await collect(chat.message(text));
  chat.close();
  expect(events.map(kind).at(-1)).toBe("reply_end");
  // The session leaves the node once the reply's writes are done; its lease is released once it
  // has lingered (a second, see `LingeringActors`).
  await sleep(1300);
  return events;
}

describe("a session let go by its node", () => {
  it("is not read again when its lease comes back untouched (or was never taken, after its creation), and is read again after another node held it", async () => {
    const [a, b] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
    const session = await a.client.createSession({ agentId: "test" });
    const beforeOne = await reads(a.metrics);
    await say(a.client, session.id, "one");
    const created = (await reads(a.metrics)) - beforeOne;

    const beforeTwo = await reads(a.metrics);
    await say(a.client, session.id, "two");
    const kept = (await reads(a.metrics)) - beforeTwo;

    await say(b.client, session.id, "three");
    // Node B served it: the lease was free, so B took it instead of forwarding the input to A.
    expect(await sample(b.metrics, "parkway_replies_total")).toBe(1);

    const beforeFour = await reads(a.metrics);
    const four = await say(a.client, session.id, "four");
    const reloaded = (await reads(a.metrics)) - beforeFour;
    expect(await sample(a.metrics, "parkway_replies_total")).toBe(3);

    // Each message also reads the session for GetSession and the attach. Read again on A, the
    // session costs its lease's reads, its record, reply, marks, last message and log ends on top.
    expect(reloaded - kept).toBeGreaterThanOrEqual(8);
    // The node that created the session kept its actor too: its first message reads no more.
    expect(reloaded - created).toBeGreaterThanOrEqual(8);

    // What A used for "four" includes B's turn: the history the model saw and the seqs.
    const lastRequest = model.requests.at(-1)!;
    const users = lastRequest.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["one", "two", "three", "four"]);
    const { lastSeq } = await b.client.getSession(session.id);
    expect(four.at(-1)!.seq).toBe(lastSeq);
    const all = await allEvents(b.client, session.id);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
    expect(all.filter((e) => kind(e) === "reply_start")).toHaveLength(4);
  });
});

describe("an input applied on the stream's own node", () => {
  it("is acknowledged after the events it caused, on the raw stream", async () => {
    const [a] = nodes as [(typeof nodes)[0]];
    const session = await a.client.createSession({ agentId: "test" });
    const raw = new AgentServiceClient(a.server.address, credentials.createInsecure());
    const call = raw.chat();
    const seen: string[] = [];
    const acked = new Promise<void>((resolve, reject) => {
      call.on("error", reject);
      call.on("data", (e: ServerEvent) => {
        const what = e.event?.$case ?? "none";
        if (what === "inputAck") {
          seen.push(`ack:${e.event?.$case === "inputAck" ? e.event.value.requestId : ""}`);
        } else seen.push(what);
        if (what === "replyEnd") resolve();
      });
    });
    call.write({
      sessionId: session.id,
      requestId: "attach-1",
      event: { $case: "attach", value: { sessionId: session.id, afterSeq: 0 } },
    });
    for (const [i, text] of ["first", "second"].entries()) {
      call.write({
        sessionId: session.id,
        requestId: `m${i}`,
        event: { $case: "userMessage", value: { text, content: [] } },
      });
      if (i === 0) await acked;
    }
    await new Promise<void>((resolve) => {
      const check = () => (seen.filter((k) => k === "replyEnd").length >= 2 ? resolve() : null);
      call.on("data", check);
      check();
    });
    call.end();
    raw.close();
    for (const id of ["m0", "m1"]) {
      const ack = seen.indexOf(`ack:${id}`);
      expect(ack).toBeGreaterThan(-1);
      // The reply the message started began before its acknowledgement.
      const starts = seen.slice(0, ack).filter((k) => k === "replyStart").length;
      expect(starts).toBe(id === "m0" ? 1 : 2);
    }
  });
});
