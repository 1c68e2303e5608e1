import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { ParkwayClientError, ParkwaySession } from "../../src/client/index.js";
import { collect, type Harness, startHarness } from "../helpers/parkway-harness.js";
import { REPO_ROOT } from "../helpers/spawn-server.js";

let h: Harness | undefined;
const children: ChildProcessWithoutNullStreams[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  await h?.close();
  h = undefined;
});

/** The server's keepalive in these tests: a ping every 500 ms, answered within 1 s. */
const KEEPALIVE = { time: 500, timeout: 1000 };

/** `test/helpers/attach-cli.ts` holding `count` streams of `sessionId` open, and its output. */
interface Holder {
  child: ChildProcessWithoutNullStreams;
  stdout: string[];
  stderr: string[];
}

/** Starts attach-cli and waits until its streams are attached. */
async function holdStreams(
  address: string,
  sessionId: string,
  count: number,
  options: { keepaliveMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<Holder> {
  const args = ["--import", "tsx", "test/helpers/attach-cli.ts", address, sessionId, String(count)];
  if (options.keepaliveMs !== undefined) args.push(String(options.keepaliveMs));
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...options.env },
  });
  children.push(child);
  const holder: Holder = { child, stdout: [], stderr: [] };
  createInterface({ input: child.stderr }).on("line", (line) => holder.stderr.push(line));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`attach-cli did not attach:\n${holder.stderr.join("\n")}`)),
      30_000,
    );
    createInterface({ input: child.stdout }).on("line", (line) => {
      holder.stdout.push(line);
      if (line === `attached ${count}`) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`attach-cli exited with ${code}:\n${holder.stderr.join("\n")}`));
    });
  });
  return holder;
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as ParkwayClientError,
  );

describe("keepalive", () => {
  it("frees the streams of a frozen client: a new attach succeeds within 2 × timeout + time", async () => {
    const streams = 4;
    h = await startHarness(
      { turns: [{ match: { lastUser: "" }, repeat: true, text: "hello" }] },
      {},
      { limits: { streamsPerSession: streams }, keepalive: KEEPALIVE },
    );
    const session = await h.client.createSession({ agentId: "test" });
    const holder = await holdStreams(h.parkway.address, session.id, streams);
    try {
      const full = await refusal(h.client.attach(session.id, { reconnectForMs: 0 }));
      expect(full?.codeName).toBe("RESOURCE_EXHAUSTED");
      expect(full?.message).toContain("streamsPerSession");

      // The process stops answering, as a sleeping laptop or a partitioned network looks to the
      // server; its kernel keeps the TCP connection open.
      holder.child.kill("SIGSTOP");
      const frozenAt = Date.now();
      let attached: ParkwaySession | undefined;
      let lastRefusal: ParkwayClientError | undefined;
      while (!attached && Date.now() - frozenAt < 20_000) {
        try {
          attached = await h.client.attach(session.id, { reconnectForMs: 0 });
        } catch (err) {
          lastRefusal = err as ParkwayClientError;
          expect(lastRefusal.codeName).toBe("RESOURCE_EXHAUSTED");
          await sleep(50);
        }
      }
      const freedAfterMs = Date.now() - frozenAt;
      expect(attached, `still refused after 20 s: ${lastRefusal?.message}`).toBeDefined();
      expect(freedAfterMs).toBeLessThanOrEqual(2 * KEEPALIVE.timeout + KEEPALIVE.time);

      // Every place the frozen client held is free again, and the session works over them.
      const more = await Promise.all(
        Array.from({ length: streams - 1 }, () =>
          h!.client.attach(session.id, { reconnectForMs: 0 }),
        ),
      );
      const events = await collect(attached!.message("hi"));
      expect(events.at(-1)?.event?.$case).toBe("replyEnd");
      for (const s of [attached!, ...more]) s.close();
    } finally {
      holder.child.kill("SIGKILL");
    }
  });

  it("keeps an idle stream of a client that pings often: no disconnect over many intervals", async () => {
    h = await startHarness(
      { turns: [{ match: { lastUser: "" }, repeat: true, text: "hello" }] },
      {},
      { limits: { streamsPerSession: 1 }, keepalive: KEEPALIVE },
    );
    const session = await h.client.createSession({ agentId: "test" });
    const clientPingMs = 100;
    const holder = await holdStreams(h.parkway.address, session.id, 1, {
      keepaliveMs: clientPingMs,
      env: { GRPC_TRACE: "keepalive,transport", GRPC_VERBOSITY: "DEBUG" },
    });
    // The stream carries no messages for 3 s: about 30 client pings and 6 of the server's.
    await sleep(3000);
    expect(holder.child.exitCode, holder.stdout.join("\n")).toBeNull();
    expect(holder.stdout.filter((l) => l.startsWith("broken"))).toEqual([]);
    const answered = holder.stderr.filter((l) => l.includes("Received ping response"));
    expect(answered.length).toBeGreaterThanOrEqual(10);
    expect(holder.stderr.filter((l) => /GOAWAY|session closed/.test(l))).toEqual([]);
    // Its stream still holds the session's one place.
    const second = await refusal(h.client.attach(session.id, { reconnectForMs: 0 }));
    expect(second?.codeName).toBe("RESOURCE_EXHAUSTED");
  });

  it("a server with keepalive disabled keeps a frozen client's streams", async () => {
    h = await startHarness(
      { turns: [] },
      {},
      { limits: { streamsPerSession: 1 }, keepalive: { enabled: false } },
    );
    const session = await h.client.createSession({ agentId: "test" });
    const holder = await holdStreams(h.parkway.address, session.id, 1);
    try {
      holder.child.kill("SIGSTOP");
      await sleep(2 * KEEPALIVE.timeout + KEEPALIVE.time + 500);
      const refused = await refusal(h.client.attach(session.id, { reconnectForMs: 0 }));
      expect(refused?.codeName).toBe("RESOURCE_EXHAUSTED");
    } finally {
      holder.child.kill("SIGKILL");
    }
  });
});
