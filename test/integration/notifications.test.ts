import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createParkwayClient,
  type ParkwayClient,
  type ServerEvent,
} from "../../src/client/index.js";
import { parseConfig } from "../../src/config/index.js";
import { type Script, startScriptedModel } from "../../src/model/scripted/index.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";
import { verifySignature } from "../../src/session/notifications/signature.js";
import { captureLog } from "../helpers/capture-log.js";
import {
  type NotificationReceiver,
  type Received,
  startNotificationReceiver,
} from "../helpers/notification-receiver.js";
import { freePort } from "../helpers/free-port.js";
import { collect } from "../helpers/parkway-harness.js";
import { spawnServer, type SpawnedServer } from "../helpers/spawn-server.js";

const SECRET = "a-receiver-secret-of-some-length";

const script: Script = {
  turns: [
    {
      match: { lastUser: "^touch" },
      repeat: true,
      toolCalls: [{ name: "Bash", input: { command: "touch made.txt" } }],
    },
    { match: { toolName: "Bash" }, repeat: true, text: "done" },
    { repeat: true, text: "done" },
  ],
};

const closers: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/**
 * Parkway with two agents whose receiver is `receiver`, retrying fast ("timed" parks for half a
 * second); its client and metrics.
 */
async function start(
  receiver: NotificationReceiver,
  target: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  const root = await mkdtemp(path.join(tmpdir(), "parkway-notify-"));
  const model = await startScriptedModel({ script });
  closers.push(() => model.close());
  const log = captureLog();
  const parkway: RunningParkway = await startParkway({
    config: parseConfig({
      listen: "127.0.0.1:0",
      data: path.join(root, "data"),
      model: { url: model.url, name: "scripted", maxRetries: 0 },
      metrics: { listen: "127.0.0.1:0" },
      ...extra,
      agents: [
        ...["ops", "timed"].map((id) => ({
          id,
          workingDirectories: [path.join(root, "work")],
          notifications: [
            {
              url: receiver.url,
              secret: SECRET,
              firstRetry: "20ms",
              maxRetryDelay: "40ms",
              ...target,
            },
          ],
          ...(id === "timed" ? { confirmTimeout: "500ms" } : {}),
        })),
      ],
    }),
    log,
  });
  closers.push(() => parkway.close());
  const client: ParkwayClient = createParkwayClient(parkway.address);
  closers.push(() => client.close());
  const scrape = async () => (await fetch(parkway.metricsUrl!)).text();
  return { parkway, client, scrape, log };
}

/** Parks a reply on one Bash call that asks; returns the session, the call and the events. */
async function park(client: ParkwayClient, agentId = "ops") {
  const session = await client.createSession({ agentId });
  const chat = await client.attach(session.id);
  const events = await collect(chat.message("touch a file"));
  const asked = events.flatMap((e) =>
    e.event?.$case === "requireUserConfirm" ? e.event.value.toolCalls : [],
  );
  expect(asked).toHaveLength(1);
  return { session, chat, call: asked[0]!, events };
}

const ofEvent = (received: readonly Received[], event: string) =>
  received.filter((r) => r.body.event === event);

const seqOf = (events: ServerEvent[], type: string) =>
  events.find((e) => e.event?.$case === type)?.seq ?? -1;

describe("park notifications", () => {
  it("are delivered at least once, signed, retried after failures, with what a person needs to decide", async () => {
    const receiver = await startNotificationReceiver();
    closers.push(() => receiver.close());
    receiver.answer = (_body, received) => (received.length < 2 ? 500 : 200);
    const { client, scrape } = await start(receiver);
    const { session, chat, call, events } = await park(client);
    expect(await scrape()).toContain('parkway_parked_replies{agent="ops"} 1');

    await receiver.waitFor((r) => r.some((x) => x.status === 200));
    const parked = ofEvent(receiver.received, "reply.parked");
    expect(parked.map((r) => r.status)).toEqual([500, 500, 200]);
    // One delivery, the same id on every attempt, each attempt signed over its body.
    const ids = new Set(parked.map((r) => r.headers["parkway-delivery"]));
    expect(ids.size).toBe(1);
    for (const r of parked) {
      expect(r.headers["parkway-event"]).toBe("reply.parked");
      expect(verifySignature(SECRET, String(r.headers["parkway-signature"]), r.text)).toBe(true);
      expect(
        verifySignature(
          "another-secret-of-some-length",
          String(r.headers["parkway-signature"]),
          r.text,
        ),
      ).toBe(false);
      expect(verifySignature(SECRET, String(r.headers["parkway-signature"]), `${r.text} `)).toBe(
        false,
      );
    }
    const body = parked[2]!.body;
    expect(body).toMatchObject({
      id: [...ids][0],
      event: "reply.parked",
      tenant: "default",
      agent: "ops",
      session: session.id,
      pending: [
        {
          callId: call.id,
          tool: "Bash",
          input: { command: "touch made.txt" },
          waitsFor: "confirm",
          reason: call.decision!.reason,
          check: call.decision!.check,
        },
      ],
    });
    expect(body.reply).toMatch(/\S/);
    expect(body.pending[0]!.suggestedRules.length).toBeGreaterThan(0);
    // A stream attached after this seq is re-announced the pending call.
    expect(body.attachAfterSeq).toBeGreaterThanOrEqual(seqOf(events, "requireUserConfirm"));

    // The answer ends the reply; the end of a reply that parked is notified too.
    await chat.confirm(call);
    await collect(chat.untilSettled());
    await receiver.waitFor((r) => ofEvent(r, "reply.ended").length > 0);
    const ended = ofEvent(receiver.received, "reply.ended")[0]!;
    expect(ended.body).toMatchObject({
      event: "reply.ended",
      session: session.id,
      reply: body.reply,
      finishedReason: "completed",
      pending: [],
    });
    expect(ended.headers["parkway-delivery"]).not.toBe(parked[0]!.headers["parkway-delivery"]);

    // Counted once the receiver's answer is read, a moment after the receiver saw the POST.
    for (const line of [
      'parkway_notifications_total{event="reply.parked",result="failed"} 2',
      'parkway_notifications_total{event="reply.parked",result="delivered"} 1',
      'parkway_notifications_total{event="reply.ended",result="delivered"} 1',
      'parkway_parked_replies{agent="ops"} 0',
    ]) {
      await expect.poll(scrape).toContain(line);
    }
  });

  it("never presents a call answered before the delivery as pending", async () => {
    const receiver = await startNotificationReceiver();
    closers.push(() => receiver.close());
    let open = false;
    receiver.answer = () => (open ? 200 : 503);
    const { client, scrape } = await start(receiver);
    const { chat, call } = await park(client);
    await receiver.waitFor((r) => r.length >= 2); // failed attempts while the call waits
    const before = receiver.received.length;
    await chat.confirm(call);
    await collect(chat.untilSettled());
    open = true;
    await receiver.waitFor((r) => ofEvent(r, "reply.ended").some((x) => x.status === 200));
    const after = receiver.received.slice(before);
    for (const r of ofEvent(after, "reply.parked")) {
      expect(r.body.pending.map((c) => c.callId)).not.toContain(call.id);
    }
    expect(ofEvent(after, "reply.parked").filter((r) => r.status === 200)).toEqual([]);
    await expect
      .poll(scrape)
      .toContain('parkway_notifications_total{event="reply.parked",result="superseded"} 1');
  });

  it("tell of a parked call that expired, then of the reply's end", async () => {
    const receiver = await startNotificationReceiver();
    closers.push(() => receiver.close());
    const { client } = await start(receiver);
    const { session, call } = await park(client, "timed");
    await receiver.waitFor((r) => ofEvent(r, "reply.ended").length > 0);
    // Notifications due together are sent together: their order is not promised.
    expect(receiver.received.map((r) => r.body.event).sort()).toEqual([
      "call.expired",
      "reply.ended",
      "reply.parked",
    ]);
    const parked = ofEvent(receiver.received, "reply.parked")[0];
    const expired = ofEvent(receiver.received, "call.expired")[0];
    expect(parked!.body.deadline).toBe(call.expiresAt!.toISOString());
    expect(expired!.body).toMatchObject({
      event: "call.expired",
      session: session.id,
      expired: [{ callId: call.id, tool: "Bash", waitsFor: "confirm" }],
    });
  });

  it("carry single-use answer links that confirm or deny through the same path as a ConfirmResult", async () => {
    const receiver = await startNotificationReceiver();
    closers.push(() => receiver.close());
    const port = await freePort();
    const { client } = await start(
      receiver,
      { answerLinks: { baseUrl: `http://127.0.0.1:${port}/` } },
      { web: { listen: `127.0.0.1:${port}` } },
    );
    const post = (url: string, body: unknown) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });

    // Allow by link: the reply resumes and completes.
    const first = await park(client);
    await receiver.waitFor((r) => ofEvent(r, "reply.parked").length === 1);
    const link = ofEvent(receiver.received, "reply.parked")[0]!.body.pending[0]!.answer!;
    expect(link.url).toMatch(
      new RegExp(`^http://127\\.0\\.0\\.1:${port}/answers/[A-Za-z0-9_-]{43}$`),
    );
    expect(Date.parse(link.expiresAt)).toBeGreaterThan(Date.now());
    const bad = await post(link.url, { decision: "maybe" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { field: string }).field).toBe("decision");
    for (const [body, field, error] of [
      [{ decision: "allow", extra: 1 }, "extra", "extra: unknown key"],
      [{ decision: "deny", reason: 5 }, "reason", /^reason: .*string/],
      [null, "body", /^body: is not an answer; send \{"decision":"allow"\}/],
      [[], "body", /^body: is not an answer/],
    ] as const) {
      const refused = await post(link.url, body);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({
        field,
        error: expect.stringMatching(error) as unknown,
      });
    }
    const empty = await fetch(link.url, { method: "POST" });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({
      field: "body",
      error: 'body: is empty; send {"decision":"allow"} or {"decision":"deny","reason":"…"}',
    });
    const ok = await post(link.url, { decision: "allow" });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({
      applied: true,
      sessionId: first.session.id,
      callId: first.call.id,
    });
    const settled = await collect(first.chat.untilSettled());
    expect(settled.at(-1)?.event?.$case).toBe("replyEnd");
    // Single use.
    expect((await post(link.url, { decision: "allow" })).status).toBe(404);
    const audit = await client.listAuditRecords({ sessionId: first.session.id });
    const confirmed = audit.records.find(
      (r) => r.toolCallId === first.call.id && r.actor.startsWith("answer link"),
    );
    expect(confirmed?.actor).toBe(`answer link (${receiver.url})`);

    // Deny by link, with a reason the model reads.
    const second = await park(client);
    await receiver.waitFor((r) => ofEvent(r, "reply.parked").length === 2);
    const denyLink = ofEvent(receiver.received, "reply.parked")[1]!.body.pending[0]!.answer!;
    expect((await post(denyLink.url, { decision: "deny", reason: "not on a Friday" })).status).toBe(
      200,
    );
    const denied = await collect(second.chat.untilSettled());
    const text = denied
      .flatMap((e) => (e.event?.$case === "toolResultTextDelta" ? [e.event.value.delta] : []))
      .join("");
    expect(text).toContain("not on a Friday");

    // A link to a call answered otherwise is refused, and changes nothing.
    const third = await park(client);
    await receiver.waitFor((r) => ofEvent(r, "reply.parked").length === 3);
    const lateLink = ofEvent(receiver.received, "reply.parked")[2]!.body.pending[0]!.answer!;
    await third.chat.confirm(third.call);
    await collect(third.chat.untilSettled());
    expect((await post(lateLink.url, { decision: "deny" })).status).toBe(409);
    expect(
      (await post(`http://127.0.0.1:${port}/answers/${"x".repeat(43)}`, { decision: "allow" }))
        .status,
    ).toBe(404);
  });

  it("become dead letters after the last attempt", async () => {
    const receiver = await startNotificationReceiver();
    closers.push(() => receiver.close());
    receiver.answer = () => 500;
    const { client, scrape, log } = await start(receiver, { maxAttempts: 3 });
    const { session } = await park(client);
    await receiver.waitFor((r) => ofEvent(r, "reply.parked").length >= 3);
    await expect
      .poll(scrape)
      .toContain('parkway_notifications_total{event="reply.parked",result="dead"} 1');
    expect(ofEvent(receiver.received, "reply.parked")).toHaveLength(3);
    const line = log.entries.find((e) => e.msg === "notification given up after its last attempt");
    expect(line?.obj).toMatchObject({ attempts: 3, url: receiver.url, error: "HTTP 500: not now" });

    // Visible through AuditService.ListDeadLetters, with what was sent and why it failed.
    const { deadLetters, nextPageToken } = await client.listDeadLetters();
    expect(nextPageToken).toBe("");
    expect(deadLetters).toHaveLength(1);
    const dead = deadLetters[0]!;
    expect(dead).toMatchObject({
      event: "reply.parked",
      url: receiver.url,
      sessionId: session.id,
      attempts: 3,
      lastError: "HTTP 500: not now",
    });
    expect(dead.id).toBe(
      ofEvent(receiver.received, "reply.parked")[0]!.headers["parkway-delivery"],
    );
    expect(JSON.parse(dead.body)).toMatchObject({ event: "reply.parked", session: session.id });
    expect(dead.deadAt!.getTime()).toBeGreaterThanOrEqual(dead.createdAt!.getTime());
    await expect(client.listDeadLetters({ pageToken: "nope" })).rejects.toThrow(/page_token/);
    await expect(client.listDeadLetters({ pageSize: 5000 })).rejects.toThrow(/page_size/);
  });

  it("read only the start of a failed answer, even one whose body never ends", async () => {
    // A receiver behind a proxy that answers 502 and then streams its body without end.
    const endless = createServer((req, res) => {
      req.resume();
      res.writeHead(502, { "content-type": "text/plain" });
      res.write("bad gateway: the receiver is down");
      const more = setInterval(() => res.write("x".repeat(16 * 1024)), 5);
      res.on("close", () => clearInterval(more));
    });
    await new Promise<void>((resolve) => endless.listen(0, "127.0.0.1", resolve));
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          endless.closeAllConnections();
          endless.close(() => resolve());
        }),
    );
    const url = `http://127.0.0.1:${(endless.address() as AddressInfo).port}/hooks`;
    // A timeout longer than the test's: the attempt must end without waiting for it.
    const { client } = await start({ url } as NotificationReceiver, {
      maxAttempts: 1,
      timeout: "5m",
    });
    await park(client);
    await expect
      .poll(async () => (await client.listDeadLetters()).deadLetters.map((d) => d.lastError))
      .toEqual([expect.stringMatching(/^HTTP 502: bad gateway: the receiver is down/)]);
    const [dead] = (await client.listDeadLetters()).deadLetters;
    expect(Buffer.byteLength(dead!.lastError)).toBeLessThanOrEqual(220);
  });

  it("resume after the server is killed between attempts", async () => {
    const receiver = await startNotificationReceiver();
    closers.push(() => receiver.close());
    let open = false;
    receiver.answer = () => (open ? 200 : 500);
    const model = await startScriptedModel({ script });
    closers.push(() => model.close());
    const root = await mkdtemp(path.join(tmpdir(), "parkway-notify-kill-"));
    const configFile = path.join(root, "parkway.json");
    await writeFile(
      configFile,
      JSON.stringify({
        model: { url: model.url, name: "scripted", maxRetries: 0 },
        agents: [
          {
            id: "ops",
            workingDirectories: [path.join(root, "work")],
            notifications: [
              {
                url: receiver.url,
                secret: SECRET,
                timeout: "1s",
                firstRetry: "1s",
                maxRetryDelay: "1s",
              },
            ],
          },
        ],
      }),
    );
    const serve = (dataDir?: string) =>
      spawnServer({
        direct: true,
        args: ["--config", configFile],
        ...(dataDir ? { dataDir } : {}),
      });
    let server: SpawnedServer = await serve();
    closers.push(() => server.stop());
    const client = createParkwayClient(server.address);
    const { session } = await park(client);
    client.close();
    await receiver.waitFor((r) => r.length >= 1);
    process.kill(-server.child.pid!, "SIGKILL");
    await server.stop();
    const first = receiver.received[0]!;
    open = true;
    server = await serve(server.dataDir);
    await receiver.waitFor((r) => r.some((x) => x.status === 200));
    const delivered = receiver.received.find((x) => x.status === 200)!;
    expect(delivered.headers["parkway-delivery"]).toBe(first.headers["parkway-delivery"]);
    expect(delivered.body).toMatchObject({ event: "reply.parked", session: session.id });
    expect(delivered.body.pending).toHaveLength(1);
  });
});
