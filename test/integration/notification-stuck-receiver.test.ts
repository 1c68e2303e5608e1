import { mkdtemp } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { parseConfig } from "../../src/config/index.js";
import { type Script, startScriptedModel } from "../../src/model/scripted/index.js";
import { startParkway } from "../../src/runtime/start-parkway.js";
import { captureLog } from "../helpers/capture-log.js";
import { startNotificationReceiver } from "../helpers/notification-receiver.js";
import { collect } from "../helpers/parkway-harness.js";

const SECRET = "a-receiver-secret-of-some-length";

const script: Script = {
  turns: [
    {
      match: { lastUser: "^touch" },
      repeat: true,
      toolCalls: [{ name: "Bash", input: { command: "touch made.txt" } }],
    },
    { repeat: true, text: "done" },
  ],
};

const closers: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** One POST a stuck receiver took: its delivery id, and whether Parkway has since hung up. */
interface Held {
  delivery: string;
  closed: boolean;
}

/** A receiver that reads each POST and never answers; it notes when the sender gives up on one. */
async function startStuckReceiver() {
  const held: Held[] = [];
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of waiters) w();
  };
  const server = createServer((req, res) => {
    const entry: Held = { delivery: String(req.headers["parkway-delivery"]), closed: false };
    held.push(entry);
    req.resume();
    res.on("close", () => {
      entry.closed = true;
      wake();
    });
    wake();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/stuck`,
    held,
    waitFor: (ready: () => boolean, timeoutMs = 25_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!ready()) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`stuck receiver: not ready after ${held.length} POSTs`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Collects garbage often, as a busy server would: a timer nothing refers to must still fire. */
function collectGarbageOften(): () => void {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const timer = setInterval(gc, 100);
  return () => clearInterval(timer);
}

async function park(client: ParkwayClient, agentId: string) {
  const session = await client.createSession({ agentId });
  const chat = await client.attach(session.id);
  const events = await collect(chat.message("touch a file"));
  expect(events.some((e) => e.event?.$case === "requireUserConfirm")).toBe(true);
  return session;
}

describe("a notification receiver that never answers", () => {
  it("times out, is retried and given up on, and holds up no other receiver", async () => {
    closers.push(collectGarbageOften());
    const stuck = await startStuckReceiver();
    closers.push(() => stuck.close());
    const healthy = await startNotificationReceiver();
    closers.push(() => healthy.close());
    const root = await mkdtemp(path.join(tmpdir(), "parkway-stuck-"));
    const model = await startScriptedModel({ script });
    closers.push(() => model.close());
    const log = captureLog();
    const workingDirectories = [path.join(root, "work")];
    const parkway = await startParkway({
      config: parseConfig({
        listen: "127.0.0.1:0",
        data: path.join(root, "data"),
        model: { url: model.url, name: "scripted", maxRetries: 0 },
        agents: [
          {
            id: "stuck",
            workingDirectories,
            notifications: [
              {
                url: stuck.url,
                secret: SECRET,
                timeout: "2s",
                firstRetry: "20ms",
                maxRetryDelay: "40ms",
                maxAttempts: 2,
              },
            ],
          },
          { id: "ops", workingDirectories, notifications: [{ url: healthy.url, secret: SECRET }] },
        ],
      }),
      log,
    });
    closers.push(() => parkway.close());
    const client = createParkwayClient(parkway.address);
    closers.push(() => client.close());

    const stuckSession = await park(client, "stuck");
    await stuck.waitFor(() => stuck.held.length >= 1);

    // While the stuck receiver holds its first attempt, another agent's receiver is told.
    const opsSession = await park(client, "ops");
    await healthy.waitFor((r) => r.some((x) => x.body.session === opsSession.id), 10_000);
    expect(stuck.held[0]!.closed).toBe(false);

    // The stuck attempt times out, is retried once, and after maxAttempts is a dead letter.
    await stuck.waitFor(() => stuck.held.length >= 2 && stuck.held.every((h) => h.closed));
    expect(new Set(stuck.held.map((h) => h.delivery)).size).toBe(1);
    await expect
      .poll(async () => (await client.listDeadLetters()).deadLetters, { timeout: 10_000 })
      .toHaveLength(1);
    const [dead] = (await client.listDeadLetters()).deadLetters;
    expect(dead).toMatchObject({
      url: stuck.url,
      sessionId: stuckSession.id,
      attempts: 2,
      lastError: "no answer within 2000 ms",
    });
    expect(stuck.held).toHaveLength(2);
    expect(healthy.received.every((r) => r.status === 200)).toBe(true);
  });
});
