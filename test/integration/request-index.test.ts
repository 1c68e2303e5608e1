import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createParkwayClient,
  type ParkwayClient,
  type ParkwayClientError,
} from "../../src/client/index.js";
import type { ReplyRequest } from "../../src/generated/parkway/v1/agent_service.js";
import { freePort } from "../helpers/free-port.js";
import { prepareAgent } from "../helpers/process-harness.js";
import { type SpawnedServer, spawnServer } from "../helpers/spawn-server.js";
import { storeReads } from "../helpers/store-reads.js";

/**
 * A session's request ids are known in memory while its actor is (a stream attached holds it): a
 * new id then costs no read of the store, and every id recorded before, in this run or an earlier
 * one, is still recognized.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Single-record reads: a request id is looked up with one. */
const GETS = ["get", "get_many"];

type Input = NonNullable<ReplyRequest["input"]>;
const message = (text: string): Input => ({ $case: "userMessage", value: { text, content: [] } });

describe("request ids in memory", () => {
  it("a new id costs no read once the session's ids are known; ids from before a restart are still found", async () => {
    const { root, model, config } = await prepareAgent("parkway-request-index-", () => ({}));
    cleanups.push(() => model.close());
    await model.reset({ turns: [{ text: "noted", repeat: true }] });
    const dataDir = path.join(root, "data");
    let server!: SpawnedServer;
    let client!: ParkwayClient;
    let metrics = "";
    const start = async () => {
      const port = await freePort();
      const args = ["--config", config, "--metrics-listen", `127.0.0.1:${port}`];
      server = await spawnServer({ dataDir, args });
      client = createParkwayClient(server.address);
      metrics = `http://127.0.0.1:${port}/metrics`;
    };
    await start();
    cleanups.push(async () => {
      client.close();
      await server.stop();
    });
    const session = await client.createSession({ agentId: "test" });
    const sessionId = session.id;
    const reply = (input: Input, requestId = "") => client.reply({ sessionId, requestId, input });
    /** The store reads of one call, once it has returned. */
    const readsOf = async (call: () => Promise<unknown>): Promise<number> => {
      const before = await storeReads(metrics, GETS);
      await call();
      return (await storeReads(metrics, GETS)) - before;
    };

    // A stream keeps the session's actor in memory; a new session has no ids to read.
    let stream = await client.attach(sessionId);
    await reply(message("warm up"));
    const withoutId = await readsOf(() => reply(message("one")));
    const withId = await readsOf(() => reply(message("two"), "a1"));
    expect(withId).toBe(withoutId);
    const a1 = await reply(message("two"), "a1");

    // After a restart the actor knows no ids: the first inputs look theirs up, then it reads them.
    stream.close();
    client.close();
    await server.stop();
    await start();
    stream = await client.attach(sessionId);
    const b1 = await reply(message("three"), "b1");
    const b2 = await reply(message("four"), "b2");
    // Every id is found, whichever run recorded it, with its first outcome.
    expect(await reply(message("two"), "a1")).toEqual(a1);
    expect(await reply(message("three"), "b1")).toEqual(b1);
    expect(await reply(message("four"), "b2")).toEqual(b2);
    const err = (await reply(message("other"), "a1").catch(
      (e: unknown) => e,
    )) as ParkwayClientError;
    expect(err.codeName).toBe("INVALID_ARGUMENT");
    expect(err.fieldViolations.map((v) => v.field)).toEqual(["request_id"]);
    // And a new id costs no read again.
    const plain = await readsOf(() => reply(message("five")));
    expect(await readsOf(() => reply(message("six"), "b3"))).toBe(plain);
    stream.close();
    // Each input applied once: warm up, one, two, three, four, five, six.
    expect(model.requests).toHaveLength(7);
  }, 60_000);
});
