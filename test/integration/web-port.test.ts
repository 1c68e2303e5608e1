import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import { ParkwayClientError } from "../../src/client/index.js";
import { parseConfig } from "../../src/config/index.js";
import type { Script } from "../../src/model/scripted/index.js";
import { startParkway } from "../../src/runtime/start-parkway.js";
import { makeCerts } from "../helpers/make-certs.js";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";
import { spawnServer } from "../helpers/spawn-server.js";
import {
  serverEvent,
  serviceDesc,
  toClientError,
  webClient,
  type WebProtocol,
} from "../helpers/web-client.js";

const run = promisify(execFile);

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const WEB = { web: { listen: "127.0.0.1:0" } };
const echo: Script = { turns: [{ match: { lastUser: "m1" }, text: "echo m1" }] };
const sha = (token: string) => createHash("sha256").update(token).digest("hex");

/** curl's answer to a Connect JSON POST of `body` to `method`, with its HTTP status. */
async function curlPost(url: string, method: string, body: string, headers: string[] = []) {
  const args = ["-sS", "-X", "POST", "-H", "content-type: application/json"];
  for (const header of headers) args.push("-H", header);
  args.push("-w", "\n%{http_code}", "--data", body, `${url}/parkway.v1.${method}`);
  const { stdout } = await run("curl", args);
  const cut = stdout.lastIndexOf("\n");
  const json = JSON.parse(stdout.slice(0, cut)) as Record<string, unknown>;
  return { status: Number(stdout.slice(cut + 1)), json };
}

/** What a web call fails with, as a gRPC client would report it. */
async function failure(call: Promise<unknown>): Promise<ParkwayClientError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => toClientError(e),
  );
  expect(err).toBeInstanceOf(ParkwayClientError);
  return err as ParkwayClientError;
}

describe("the web port", () => {
  it("answers curl's Connect JSON POST to ListAgents with the agents", async () => {
    h = await startHarness(echo, {}, WEB);
    expect(h.parkway.webUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const { status, json } = await curlPost(h.parkway.webUrl!, "AgentService/ListAgents", "{}");
    expect(status).toBe(200);
    expect((json.agents as { id: string }[]).map((a) => a.id)).toEqual(["test"]);
  });

  it("is turned on by parkway serve --web-listen, and the listening line names its webUrl", async () => {
    const server = await spawnServer({ direct: true, args: ["--web-listen", "127.0.0.1:0"] });
    try {
      const listening = server.output
        .map((line) => {
          try {
            return JSON.parse(line) as { msg?: string; webUrl?: string };
          } catch {
            return {};
          }
        })
        .find((entry) => entry.msg === "listening");
      expect(listening?.webUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const { json } = await curlPost(listening!.webUrl!, "AgentService/ListAgents", "{}");
      expect((json.agents as { id: string }[]).map((a) => a.id)).toEqual(["assistant"]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it("serves Connect (JSON and binary) and gRPC-web, and names the field of bad input", async () => {
    h = await startHarness(echo, {}, WEB);
    const url = h.parkway.webUrl!;
    const session = await h.client.createSession({ agentId: "test" });
    for (const protocol of ["connect", "connect-binary", "grpc-web"] as WebProtocol[]) {
      const agent = webClient(url, protocol, "parkway.v1.AgentService");
      const listed = await agent.listAgents!({});
      expect(
        (listed.agents as { id: string }[]).map((a) => a.id),
        protocol,
      ).toEqual(["test"]);
      const got = await agent.getSession!({ sessionId: session.id });
      expect((got.session as { id: string }).id, protocol).toBe(session.id);
      const err = await failure(agent.send!({ requestId: "r1", input: { case: undefined } }));
      expect(err.codeName, protocol).toBe("INVALID_ARGUMENT");
      expect(
        err.fieldViolations.map((v) => v.field),
        protocol,
      ).toContain("session_id");
      const missing = await failure(agent.getSession!({ sessionId: "nope" }));
      expect(missing.codeName, protocol).toBe("NOT_FOUND");
      const rules = webClient(url, protocol, "parkway.v1.PermissionService");
      const listedRules = await rules.listRules!({ sessionId: session.id });
      expect(listedRules.rules, protocol).toEqual([]);
      const audit = webClient(url, protocol, "parkway.v1.AuditService");
      expect((await audit.listAuditRecords!({})).records, protocol).toEqual([]);
    }
    const bad = await curlPost(url, "AgentService/Send", '{"requestId":"r2"}');
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ code: "invalid_argument", message: /session_id/ });
    // A misspelled enum value or an unknown field is refused, naming it, and nothing is created.
    const before = (await h.client.listSessions({})).sessions.length;
    const mode = await curlPost(
      url,
      "AgentService/CreateSession",
      '{"agentId":"test","permissionMode":"PERMISSION_MODE_YOLO"}',
    );
    expect(mode.status).toBe(400);
    expect(mode.json).toMatchObject({ code: "invalid_argument", message: /permission_mode/ });
    const unknown = await curlPost(
      url,
      "AgentService/CreateSession",
      '{"agentId":"test","bogus":1}',
    );
    expect(unknown.status).toBe(400);
    expect(unknown.json).toMatchObject({ code: "invalid_argument", message: /bogus/ });
    expect((await h.client.listSessions({})).sessions.length).toBe(before);
  });

  it("refuses a message larger than limits.messageBytes with resource_exhausted", async () => {
    h = await startHarness(echo, {}, { ...WEB, limits: { messageBytes: 4096 } });
    const session = await h.client.createSession({ agentId: "test" });
    const agent = webClient(h.parkway.webUrl!, "connect-binary", "parkway.v1.AgentService");
    const input = { case: "userMessage", value: { text: "x".repeat(10_000) } };
    const err = await failure(agent.send!({ sessionId: session.id, requestId: "big", input }));
    expect(err.codeName).toBe("RESOURCE_EXHAUSTED");
    expect((await h.client.getSession(session.id)).lastSeq).toBe(0);
  });

  it("asks for the gRPC port's bearer tokens", async () => {
    const tenants = [{ id: "acme", tokens: [{ name: "ci", sha256: sha("acme-secret") }] }];
    h = await startHarness(echo, {}, { ...WEB, tenants });
    const url = h.parkway.webUrl!;
    const agent = webClient(url, "connect", "parkway.v1.AgentService");
    const none = await failure(agent.listAgents!({}));
    expect(none.codeName).toBe("UNAUTHENTICATED");
    expect(none.message).toMatch(/bearer token/);
    const wrong = await failure(
      agent.listAgents!({}, { headers: { authorization: "Bearer guess" } }),
    );
    expect(wrong.codeName).toBe("UNAUTHENTICATED");
    const ok = await agent.listAgents!({}, { headers: { authorization: "Bearer acme-secret" } });
    expect((ok.agents as unknown[]).length).toBe(1);
    const denied = await curlPost(url, "AgentService/ListAgents", "{}");
    expect(denied).toMatchObject({ status: 401, json: { code: "unauthenticated" } });
    const allowed = await curlPost(url, "AgentService/ListAgents", "{}", [
      "authorization: Bearer acme-secret",
    ]);
    expect(allowed.status).toBe(200);
  });

  it("refuses to listen beyond loopback without tenants or allowRemote, or on a port in use", async () => {
    const data = await mkdtemp(path.join(tmpdir(), "parkway-web-"));
    const config = parseConfig({
      listen: "127.0.0.1:0",
      data,
      web: { listen: "0.0.0.0:0" },
      logLevel: "silent",
    });
    await expect(startParkway({ config })).rejects.toThrow(
      /web\.listen: 0\.0\.0\.0:0 is not a loopback address/,
    );
    h = await startHarness(echo, {}, WEB);
    const taken = new URL(h.parkway.webUrl!).host;
    const clash = parseConfig({
      listen: "127.0.0.1:0",
      data,
      web: { listen: taken },
      logLevel: "silent",
    });
    await expect(startParkway({ config: clash })).rejects.toThrow(
      `cannot listen on ${taken}: address in use (EADDRINUSE)`,
    );
  });

  it("answers unavailable once the server drains, as the gRPC port does", async () => {
    h = await startHarness(echo, {}, WEB);
    const agent = webClient(h.parkway.webUrl!, "connect", "parkway.v1.AgentService");
    expect(((await agent.listAgents!({})).agents as unknown[]).length).toBe(1);
    h.parkway.server.drain();
    const err = await failure(agent.listAgents!({}));
    expect([err.codeName, err.message]).toEqual(["UNAVAILABLE", "server shutting down"]);
  });

  it("lets the session go when a web client cancels its Watch", async () => {
    h = await startHarness(echo, {}, WEB);
    const session = await h.client.createSession({ agentId: "test" });
    await h.client.send(session.id, { $case: "userMessage", value: { text: "m1", content: [] } });
    for (const protocol of ["connect", "grpc-web"] as WebProtocol[]) {
      const agent = webClient(h.parkway.webUrl!, protocol, "parkway.v1.AgentService");
      const stop = new AbortController();
      const events = agent.watch!({ sessionId: session.id }, { signal: stop.signal });
      const iterator = events[Symbol.asyncIterator]();
      expect(serverEvent((await iterator.next()).value).seq, protocol).toBe(1);
      expect(h.parkway.liveSessions(), protocol).toBe(1);
      stop.abort();
      await iterator.next().catch(() => undefined);
      const deadline = Date.now() + 5000;
      while (h.parkway.liveSessions() > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(h.parkway.liveSessions(), protocol).toBe(0);
    }
  });

  it("ends a Watch with unavailable when the server shuts down", async () => {
    const started = await startHarness(echo, {}, WEB);
    const session = await started.client.createSession({ agentId: "test" });
    await started.client.send(session.id, {
      $case: "userMessage",
      value: { text: "m1", content: [] },
    });
    const agent = webClient(started.parkway.webUrl!, "grpc-web", "parkway.v1.AgentService");
    const events = agent.watch!({ sessionId: session.id, afterSeq: 0n })[Symbol.asyncIterator]();
    const first = await events.next();
    expect(serverEvent(first.value).seq).toBe(1);
    const closed = started.parkway.close();
    const err = await (async () => {
      for (;;) if ((await events.next()).done) return undefined;
    })().catch((e: unknown) => e);
    await closed;
    started.client.close();
    await started.model.close();
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unavailable);
    expect((err as ConnectError).rawMessage).toBe("server shutting down");
  });

  it("serves HTTPS with the gRPC port's certificate, HTTP/2 and HTTP/1.1; Chat is refused", async () => {
    const certs = await makeCerts(await mkdtemp(path.join(tmpdir(), "parkway-web-certs-")));
    const ca = await readFile(certs.ca);
    h = await startHarness(
      echo,
      {},
      { ...WEB, tls: { cert: certs.serverCert, key: certs.serverKey } },
    );
    const url = h.parkway.webUrl!;
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const desc = serviceDesc("parkway.v1.AgentService");
    const h2 = createClient(
      desc,
      createConnectTransport({ baseUrl: url, httpVersion: "2", nodeOptions: { ca } }),
    ) as never as Record<string, (req: unknown) => unknown>;
    const listed = (await h2.listAgents!({})) as { agents: unknown[] };
    expect(listed.agents.length).toBe(1);
    const h1 = createClient(
      desc,
      createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1", nodeOptions: { ca } }),
    ) as never as Record<string, (req: unknown) => unknown>;
    expect(((await h1.listAgents!({})) as { agents: unknown[] }).agents.length).toBe(1);
    const chat = h2.chat!((async function* () {})()) as AsyncIterable<unknown>;
    const err = await (async () => {
      for await (const _ of chat) return undefined;
      return undefined;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unimplemented);
    expect((err as ConnectError).rawMessage).toMatch(/use Watch for the events and Send/);
  });

  it("asks web clients for a certificate signed by tls.clientCa (mTLS)", async () => {
    const certs = await makeCerts(await mkdtemp(path.join(tmpdir(), "parkway-web-certs-")));
    const [ca, cert, key] = await Promise.all(
      [certs.ca, certs.clientCert, certs.clientKey].map((file) => readFile(file)),
    );
    const tls = { cert: certs.serverCert, key: certs.serverKey, clientCa: certs.ca };
    h = await startHarness(echo, {}, { ...WEB, tls });
    const desc = serviceDesc("parkway.v1.AgentService");
    const client = (nodeOptions: Record<string, unknown>) =>
      createClient(
        desc,
        createConnectTransport({ baseUrl: h!.parkway.webUrl!, httpVersion: "1.1", nodeOptions }),
      ) as never as Record<string, (req: unknown) => Promise<{ agents: unknown[] }>>;
    expect((await client({ ca, cert, key }).listAgents!({})).agents.length).toBe(1);
    const refused = await client({ ca }).listAgents!({}).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConnectError);
  });
});
