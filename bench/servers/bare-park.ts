/**
 * Child process: the bare park, the least a server that parks a reply durably can do on the park
 * row's turns. The Chat bidi method of the echo service (bench/lib/echo-service.ts), the answers
 * copies of templates the client sends in the call's metadata (Parkway's own events):
 *
 * - a user message: an unsynced classic-level batch (a reply's start), the model called (the same
 *   "park" turn, through the same timing proxy, over a keep-alive node:http agent) and its answer
 *   read to `[DONE]`, then a synced batch (the park), then REQUIRE_USER_CONFIRM and REPLY_PARKED;
 * - any other event (the interrupt): an unsynced batch (the reply's end), then REPLY_END.
 *
 * The batches hold as many records of the same sizes as Parkway's own for these turns (6 records,
 * 3.1 KB; 9 records, 6.6 KB; 6 records, 2.8 KB), in a LevelDB directory of their own. No session,
 * permission check, event log or record encoding: the hops and the synced write, and their cost on
 * this machine at the park row's pace.
 */
import { Agent, request } from "node:http";
import type { ServerDuplexStream } from "@grpc/grpc-js";
import { ClassicLevel } from "classic-level";
import type { ClientEvent, ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { serveIpc } from "../lib/child.js";
import { BARE_PARK_KEYS, serveEcho, templateOf } from "../lib/echo-service.js";

const { dir, modelUrl } = JSON.parse(process.argv[2] ?? "{}") as { dir: string; modelUrl: string };
const db = new ClassicLevel<string, string>(dir);
await db.open();
const agent = new Agent({ keepAlive: true });
const target = new URL(`${modelUrl}/chat/completions`);
const payload = JSON.stringify({
  model: "scripted",
  messages: [{ role: "user", content: "park" }],
  stream: true,
});

/** Record sizes (bytes) of Parkway's batches for the same turns. */
const START = [1200, 530, 520, 420, 330, 100];
const PARK = [2930, 530, 410, 440, 980, 40, 1170, 110, 100];
const END = [1000, 530, 520, 400, 300, 100];
let n = 0;

function write(sizes: number[], sync: boolean): Promise<void> {
  const ops = sizes.map((size) => ({
    type: "put" as const,
    key: `k${String(n++).padStart(12, "0")}`,
    value: "x".repeat(size),
  }));
  return db.batch(ops, { sync });
}

/** Calls the model and resolves once its answer has been read to the end. */
function callModel(): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      { method: "POST", agent, headers: { "content-type": "application/json" } },
      (res) => {
        res.on("data", () => undefined);
        res.on("end", () => resolve());
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

function park(call: ServerDuplexStream<ClientEvent, ServerEvent>): void {
  const [require, parked, ended] = BARE_PARK_KEYS.map((key) => templateOf(call, key));
  let seq = 0;
  const send = (event: ServerEvent) => {
    seq += 1;
    call.write({ ...event, seq, createdAt: new Date() });
  };
  call.on("data", (event: ClientEvent) => {
    void (async () => {
      if (event.event?.$case === "userMessage") {
        await Promise.all([write(START, false), callModel()]);
        await write(PARK, true);
        send(require!);
        send(parked!);
      } else {
        await write(END, false);
        send(ended!);
      }
    })().catch((err: unknown) => call.destroy(err as Error));
  });
  call.on("end", () => call.end());
  call.on("error", () => undefined);
}

const { server, address } = await serveEcho(park);

serveIpc(
  { address },
  {
    close: async () => {
      server.forceShutdown();
      await db.close();
    },
  },
);
