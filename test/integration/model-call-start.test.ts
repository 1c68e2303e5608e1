import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import {
  createParkwayClient,
  type ParkwayClient,
  type ParkwaySession,
} from "../../src/client/index.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { VISIBLE_AHEAD } from "../../src/session/seq-epoch.js";
import { freePort } from "../helpers/free-port.js";
import { collect, kind } from "../helpers/parkway-harness.js";
import { prepareAgent } from "../helpers/process-harness.js";
import { spawnServer } from "../helpers/spawn-server.js";
import { storeReads } from "../helpers/store-reads.js";

/**
 * A model call's start (MODEL_CALL_START) goes out at once and is written with what the model
 * answers first: a write less per model call. A crash before that answer loses it unwritten, and
 * the seqs after the restart skip past it.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const WRITES = ["write", "write_synced"];

async function started(turns: object[]) {
  const { root, model, config } = await prepareAgent("parkway-model-call-start-", () => ({}));
  cleanups.push(() => model.close());
  await model.reset({ turns });
  const dataDir = path.join(root, "data");
  const port = await freePort();
  const launch = () =>
    spawnServer({ dataDir, args: ["--config", config, "--metrics-listen", `127.0.0.1:${port}`] });
  const self = {
    server: await launch(),
    client: undefined as unknown as ParkwayClient,
    metrics: `http://127.0.0.1:${port}/metrics`,
    async kill() {
      self.client.close();
      process.kill(-self.server.child.pid!, "SIGKILL");
      await new Promise((resolve) => self.server.child.once("exit", resolve));
      self.server = await launch();
      self.client = createParkwayClient(self.server.address);
    },
  };
  self.client = createParkwayClient(self.server.address);
  cleanups.push(async () => {
    self.client.close();
    await self.server.stop();
  });
  return self;
}

/** The events of a session's stream up to its `count`th event whose `$case` is `type`. */
async function readUntil(stream: ParkwaySession, type: string, count = 1): Promise<ServerEvent[]> {
  const out: ServerEvent[] = [];
  for (let seen = 0; seen < count;) {
    const e = await stream.next(AbortSignal.timeout(10_000));
    if (!e) throw new Error(`the stream ended after ${out.map(kind).join(", ")}`);
    if (e.event?.$case === type) seen += 1;
    out.push(e);
  }
  return out;
}

const message = (text: string) => ({
  $case: "userMessage" as const,
  value: { text, content: [] },
});

describe("a model call's start", () => {
  it("is written with the model's first answer, not before it", async () => {
    // The role chunk comes at once, the text 1.5 s later.
    const s = await started([{ text: "a late answer", delayMs: 1500, repeat: true }]);
    const session = await s.client.createSession({ agentId: "test" });
    const stream = await s.client.attach(session.id);
    for (let round = 0; round < 2; round++) {
      const before = await storeReads(s.metrics, WRITES);
      await stream.send(message("hello"));
      const live = await readUntil(stream, "modelCallStart");
      // A write of its own would have been issued at once and be done by now.
      await sleep(200);
      expect((await storeReads(s.metrics, WRITES)) - before).toBe(1); // the reply's start
      live.push(...(await readUntil(stream, "replyEnd")));
      expect(live.map(kind)).toEqual([
        "reply_start",
        "model_call_start",
        "text_block_start",
        "text_block_delta",
        "text_block_delta",
        "text_block_end",
        "model_call_end",
        "reply_end",
      ]);
      // Stored with what followed: a replay shows the same events under the same seqs.
      const replay = await s.client.attach(session.id, { afterSeq: live[0]!.seq - 1 });
      const replayed = await readUntil(replay, "replyEnd");
      replay.close();
      expect(replayed.map((e) => [e.seq, kind(e)])).toEqual(live.map((e) => [e.seq, kind(e)]));
    }
    stream.close();
  });

  it("shown while the model has not answered is lost by a crash, and its seq is never given again", async () => {
    // The role chunk comes at once, the text a minute later: the model has not answered.
    const s = await started([
      { match: { lastUser: "^slow$" }, text: "too late", delayMs: 60_000 },
      { match: { lastUser: "^again$" }, text: "here" },
    ]);
    const session = await s.client.createSession({ agentId: "test" });
    const stream = await s.client.attach(session.id);
    await stream.send(message("slow"));
    const seen = await readUntil(stream, "modelCallStart");
    const shown = seen.at(-1)!.seq;
    stream.close();
    await s.kill();

    const after = await collect(
      (await s.client.attach(session.id, { afterSeq: 0 })).untilSettled(
        AbortSignal.timeout(10_000),
      ),
    );
    // Stored: the reply's start; then the end the restart gives the reply, past every seq the
    // crash may have lost unwritten.
    expect(after.map(kind)).toEqual(["reply_start", "reply_end"]);
    expect(after[0]!.seq).toBe(shown - 1);
    expect(after[1]!.seq).toBe(shown - 1 + VISIBLE_AHEAD + 1);
    const end = after[1]!.event;
    expect(end?.$case === "replyEnd" && end.value.error?.code).toBe("server_restarted");
    // The session goes on, its seqs after the gap.
    const next = await s.client.reply({ sessionId: session.id, input: message("again") });
    expect(next.message?.finishedReason).toBe(1);
  });
});
