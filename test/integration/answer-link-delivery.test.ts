import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { silentLogger } from "../../src/common/logger.js";
import { parseConfig } from "../../src/config/index.js";
import { type Script, startScriptedModel } from "../../src/model/scripted/index.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";
import { AnswerTokenRecord, tokenHash } from "../../src/session/notifications/answer-links.js";
import { verifySignature } from "../../src/session/notifications/signature.js";
import { freePort } from "../helpers/free-port.js";
import {
  type NotificationReceiver,
  type Received,
  startNotificationReceiver,
} from "../helpers/notification-receiver.js";
import { collect } from "../helpers/parkway-harness.js";

/**
 * When an answer link is valid, and with which secret its token is made: from the attempt that
 * delivers it, whatever the retries before, and the secret configured then.
 */

const SECRET = "a-receiver-secret-of-some-length";
const ROTATED = "the-receiver-secret-after-rotation";
const TTL_MS = 10 * 60_000;

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

/** Where a Parkway keeps its data and serves its answer links; the same across restarts. */
async function place() {
  const root = await mkdtemp(path.join(tmpdir(), "parkway-answer-links-"));
  const model = await startScriptedModel({ script });
  closers.push(() => model.close());
  return { root, model, webPort: await freePort() };
}

/**
 * Parkway on `at`'s data, notifying `receiver` with `secret` and answer links valid for TTL_MS;
 * the agent "timed" asks for confirmations that expire sooner than that. Closed by `stop`.
 */
async function start(
  at: Awaited<ReturnType<typeof place>>,
  receiver: NotificationReceiver,
  secret: string,
) {
  const parkway: RunningParkway = await startParkway({
    config: parseConfig({
      listen: "127.0.0.1:0",
      data: path.join(at.root, "data"),
      model: { url: at.model.url, name: "scripted", maxRetries: 0 },
      web: { listen: `127.0.0.1:${at.webPort}` },
      agents: ["ops", "timed"].map((id) => ({
        id,
        workingDirectories: [path.join(at.root, "work")],
        ...(id === "timed" ? { confirmTimeout: "5m" } : {}),
        notifications: [
          {
            url: receiver.url,
            secret,
            events: ["reply.parked"],
            timeout: "1s",
            firstRetry: "50ms",
            maxRetryDelay: "100ms",
            answerLinks: { baseUrl: `http://127.0.0.1:${at.webPort}`, ttl: `${TTL_MS}ms` },
          },
        ],
      })),
    }),
    log: silentLogger,
  });
  const client: ParkwayClient = createParkwayClient(parkway.address);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    client.close();
    await parkway.close();
  };
  closers.push(stop);
  return { parkway, client, stop };
}

/** Parks a reply on one Bash call that asks; the session, the call and the park's last seq. */
async function park(client: ParkwayClient, agentId = "ops") {
  const session = await client.createSession({ agentId });
  const chat = await client.attach(session.id);
  const events = await collect(chat.message("touch a file"));
  const call = events.flatMap((e) =>
    e.event?.$case === "requireUserConfirm" ? e.event.value.toolCalls : [],
  )[0]!;
  expect(events.at(-1)?.event?.$case).toBe("replyParked");
  return { session, chat, call, lastSeq: events.at(-1)!.seq };
}

const answerOf = (r: Received) => r.body.pending[0]!.answer!;

const answerBy = (url: string, decision: "allow" | "deny") =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ decision }),
  });

/** The expiry the server holds for a link (what it enforces). */
async function storedExpiry(parkway: RunningParkway, url: string) {
  const token = url.slice(url.lastIndexOf("/") + 1);
  return (await parkway.store.get(AnswerTokenRecord, tokenHash(token)))?.expiresAt;
}

/** Resumes the session's reply from after `afterSeq` and waits for its end. */
async function ended(client: ParkwayClient, sessionId: string, afterSeq: number) {
  const chat = await client.attach(sessionId, { afterSeq });
  const events = await collect(chat.untilSettled());
  return events.at(-1)?.event?.$case;
}

describe("answer links", () => {
  it("are valid for their ttl from the attempt that delivers them, after failed ones", async () => {
    const receiver = await startNotificationReceiver();
    closers.push(() => receiver.close());
    receiver.answer = (_body, received) => (received.length < 3 ? 503 : 200);
    const at = await place();
    const { parkway, client } = await start(at, receiver, SECRET);
    const { session, call, lastSeq } = await park(client);
    await receiver.waitFor((r) => r.some((x) => x.status === 200));

    const attempts = receiver.received;
    expect(attempts.map((r) => r.status)).toEqual([503, 503, 503, 200]);
    const delivered = attempts[3]!;
    const link = answerOf(delivered);
    // Issued by the delivering attempt: after the last failed one arrived, before it arrived itself.
    const issuedAt = Date.parse(link.expiresAt) - TTL_MS;
    expect(issuedAt).toBeGreaterThan(attempts[2]!.at);
    expect(issuedAt).toBeLessThanOrEqual(delivered.at);
    // Each attempt gave its link its own ttl; the token is the same (the same secret).
    const expiries = attempts.map((r) => Date.parse(answerOf(r).expiresAt));
    expect([...expiries].sort((a, b) => a - b)).toEqual(expiries);
    expect(new Set(expiries).size).toBe(4);
    expect(new Set(attempts.map((r) => answerOf(r).url)).size).toBe(1);
    // What the body says is what the server enforces.
    expect(await storedExpiry(parkway, link.url)).toBe(link.expiresAt);

    const answered = await answerBy(link.url, "allow");
    expect(answered.status).toBe(200);
    expect(await answered.json()).toEqual({
      applied: true,
      sessionId: session.id,
      callId: call.id,
    });
    expect(await ended(client, session.id, lastSeq)).toBe("replyEnd");
  });

  it("never outlive the call they answer", async () => {
    const receiver = await startNotificationReceiver();
    closers.push(() => receiver.close());
    const at = await place();
    const { parkway, client } = await start(at, receiver, SECRET);
    const { call } = await park(client, "timed");
    await receiver.waitFor((r) => r.length === 1);
    const pending = receiver.received[0]!.body.pending[0]!;
    // The call expires within five minutes, sooner than the link's ttl would end.
    expect(pending.expiresAt).toBe(call.expiresAt!.toISOString());
    expect(pending.answer!.expiresAt).toBe(pending.expiresAt);
    expect(await storedExpiry(parkway, pending.answer!.url)).toBe(pending.expiresAt);
  });

  it("delivered after the secret changed answer the call", async () => {
    const receiver = await startNotificationReceiver();
    closers.push(() => receiver.close());
    let open = false;
    receiver.answer = () => (open ? 200 : 503);
    const at = await place();
    const before = await start(at, receiver, SECRET);
    const { session, call, lastSeq } = await park(before.client);
    await receiver.waitFor((r) => r.length >= 1);
    await before.stop();

    // Restarted with another secret; the receiver takes the notification now.
    open = true;
    const failed = receiver.received.length;
    const { client } = await start(at, receiver, ROTATED);
    await receiver.waitFor((r) => r.some((x) => x.status === 200));
    const delivered = receiver.received.find((x) => x.status === 200)!;
    expect(receiver.received.indexOf(delivered)).toBeGreaterThanOrEqual(failed);
    const signed = String(delivered.headers["parkway-signature"]);
    expect(verifySignature(ROTATED, signed, delivered.text)).toBe(true);
    const link = answerOf(delivered);
    expect(link.url).not.toBe(answerOf(receiver.received[0]!).url);

    const answered = await answerBy(link.url, "allow");
    expect(answered.status).toBe(200);
    expect(await answered.json()).toMatchObject({ sessionId: session.id, callId: call.id });
    expect(await ended(client, session.id, lastSeq)).toBe("replyEnd");
  });

  it("delivered before the secret changed still answer after it", async () => {
    const receiver = await startNotificationReceiver();
    closers.push(() => receiver.close());
    const at = await place();
    const before = await start(at, receiver, SECRET);
    const { session, call, lastSeq } = await park(before.client);
    await receiver.waitFor((r) => r.length === 1);
    const link = answerOf(receiver.received[0]!);
    await before.stop();

    const { client } = await start(at, receiver, ROTATED);
    const answered = await answerBy(link.url, "deny");
    expect(answered.status).toBe(200);
    expect(await answered.json()).toMatchObject({ sessionId: session.id, callId: call.id });
    expect(await ended(client, session.id, lastSeq)).toBe("replyEnd");
    // Single use, after the change as before it.
    expect((await answerBy(link.url, "allow")).status).toBe(404);
  });
});
