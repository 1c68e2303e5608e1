import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelFetch, timedOut } from "../../../src/model/http-fetch.js";

/** A server answering by path; it counts connections and notes requests closed before the end. */
interface Fixture {
  url: string;
  connections: number;
  closedEarly: string[];
  bodies: string[];
  /** The client's port of each request, in order. */
  ports: number[];
  dropNext: boolean;
  server: Server;
}

function handle(fx: Fixture, req: IncomingMessage, res: ServerResponse, body: string): void {
  fx.bodies.push(body);
  fx.ports.push(req.socket.remotePort ?? 0);
  res.on("close", () => {
    if (!res.writableFinished) fx.closedEarly.push(req.url ?? "");
  });
  switch (req.url) {
    case "/sse":
      res.writeHead(200, { "content-type": "text/event-stream", "x-answer": "yes" });
      res.write("data: one\n\n");
      setTimeout(() => res.end("data: two\n\n"), 20);
      return;
    case "/sse-burst":
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(BURST + "data: tail-without-end");
      return;
    case "/error":
      res.writeHead(429, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "slow down", method: req.method } }));
      return;
    case "/empty":
      res.writeHead(204);
      res.end();
      return;
    case "/drop-once":
      // The first request on a kept-alive connection after the first one: dropped unanswered.
      if (fx.dropNext) {
        fx.dropNext = false;
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end("data: kept\n\n");
      return;
    case "/drop-always":
      if (fx.bodies.filter((b) => b === "always").length > 1) {
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end("data: first\n\n");
      return;
    case "/big":
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (let i = 0; i < 64; i++)
        res.write(`data: ${String(i).padStart(2, "0")}${"x".repeat(16_000)}\n\n`);
      res.end();
      return;
    case "/json-hang":
      res.writeHead(500, { "content-type": "application/json" });
      res.write('{"error":');
      return; // never ends
    case "/hang-headers":
      return; // never answers
    case "/hang-body":
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
      return; // never ends
    default:
      res.writeHead(404);
      res.end();
  }
}

/** 300 events written at once: one socket read brings many. */
const BURST = Array.from({ length: 300 }, (_, i) => `data: {"i":${i}}\n\n`).join("");

async function start(): Promise<Fixture> {
  const fx = { connections: 0, closedEarly: [], bodies: [], ports: [] } as unknown as Fixture;
  fx.server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => handle(fx, req, res, body));
  });
  fx.server.on("connection", () => fx.connections++);
  await new Promise<void>((r) => fx.server.listen(0, "127.0.0.1", r));
  fx.url = `http://127.0.0.1:${(fx.server.address() as AddressInfo).port}`;
  return fx;
}

async function readAll(body: unknown): Promise<string> {
  let text = "";
  for await (const chunk of body as AsyncIterable<Uint8Array>)
    text += Buffer.from(chunk).toString();
  return text;
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe("modelFetch (the model requests' fetch over undici)", () => {
  let fx: Fixture;
  const fetch = modelFetch();
  beforeAll(async () => (fx = await start()));
  afterAll(async () => {
    fx.server.closeAllConnections();
    await new Promise((r) => fx.server.close(r));
  });

  it("streams an event-stream answer as an async iterable of bytes, with status and headers", async () => {
    const res = await fetch(`${fx.url}/sse`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"q":1}',
    });
    expect(res.status).toBe(200);
    expect(res.ok).toBe(true);
    expect(res.headers.get("x-answer")).toBe("yes");
    expect(await readAll(res.body)).toBe("data: one\n\ndata: two\n\n");
    expect(fx.bodies.at(-1)).toBe('{"q":1}');
  });

  it("hands an event-stream answer over whole, as it is read, however many events a read brings", async () => {
    const res = await fetch(`${fx.url}/sse-burst`);
    expect(await readAll(res.body)).toBe(BURST + "data: tail-without-end");
  });

  it("gives any other answer a standard body the SDK can read as JSON", async () => {
    const res = await fetch(new URL(`${fx.url}/error`), { method: "DELETE" });
    expect(res.status).toBe(429);
    expect(res.ok).toBe(false);
    expect(await res.json()).toEqual({ error: { message: "slow down", method: "DELETE" } });
  });

  it("answers any other answer at its headers; an abort then ends its body and the request", async () => {
    const abort = new AbortController();
    const res = await fetch(`${fx.url}/json-hang`, { signal: abort.signal });
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toBe("application/json");
    const reading = res.text();
    abort.abort();
    await expect(reading).rejects.toMatchObject({ name: "AbortError" });
    await until(() => fx.closedEarly.includes("/json-hang"));
    expect(fx.closedEarly).toContain("/json-hang");
  });

  it("answers a 204 with no body", async () => {
    const res = await fetch(`${fx.url}/empty`);
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
  });

  it("reuses one connection for calls one after another (keep-alive)", async () => {
    const before = fx.connections;
    for (let i = 0; i < 5; i++) await readAll((await fetch(`${fx.url}/sse`)).body);
    expect(fx.connections - before).toBeLessThanOrEqual(1);
  });

  it("sends a request again, once, on another connection when a reused one was closed under it", async () => {
    expect(await readAll((await fetch(`${fx.url}/drop-once`)).body)).toBe("data: kept\n\n");
    fx.dropNext = true;
    const sent = fx.bodies.length;
    expect(await readAll((await fetch(`${fx.url}/drop-once`)).body)).toBe("data: kept\n\n");
    expect(fx.bodies.length - sent).toBe(2); // the dropped request and the one sent again
    const [dropped, again] = fx.ports.slice(sent);
    expect(again).not.toBe(dropped); // not over the connection the server closed
  });

  it("gives up when the request sent again fails too", async () => {
    await readAll((await fetch(`${fx.url}/drop-always`, { method: "POST", body: "always" })).body);
    await expect(
      fetch(`${fx.url}/drop-always`, { method: "POST", body: "always" }),
    ).rejects.toMatchObject({ code: "UND_ERR_SOCKET", message: "other side closed" });
    expect(fx.bodies.filter((b) => b === "always")).toHaveLength(3);
  });

  it("rejects with an AbortError when aborted before the headers, and closes the request", async () => {
    const abort = new AbortController();
    const sent = fx.bodies.length;
    const pending = fetch(`${fx.url}/hang-headers`, { signal: abort.signal });
    await until(() => fx.bodies.length > sent);
    abort.abort(new Error("stop"));
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    await until(() => fx.closedEarly.includes("/hang-headers"));
    expect(fx.closedEarly).toContain("/hang-headers");
  });

  it("ends a streamed body with an AbortError when aborted after the headers", async () => {
    const abort = new AbortController();
    const res = await fetch(`${fx.url}/hang-body`, { signal: abort.signal });
    const chunks: string[] = [];
    const reading = (async () => {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        chunks.push(Buffer.from(chunk).toString());
        abort.abort();
      }
    })();
    await expect(reading).rejects.toMatchObject({ name: "AbortError" });
    expect(chunks).toEqual(["data: first\n\n"]);
    await until(() => fx.closedEarly.includes("/hang-body"));
    expect(fx.closedEarly).toContain("/hang-body");
  });

  it("closes the request when its reader stops early", async () => {
    const closed = () => fx.closedEarly.filter((u) => u === "/hang-body").length;
    const before = closed();
    const res = await fetch(`${fx.url}/hang-body`);
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      expect(Buffer.from(chunk).toString()).toBe("data: first\n\n");
      break;
    }
    await until(() => closed() > before);
    expect(closed()).toBe(before + 1);
  });

  it("hands a large answer over whole to a slow reader (reads paused while it catches up)", async () => {
    const res = await fetch(`${fx.url}/big`);
    let text = "";
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += Buffer.from(chunk).toString();
      await new Promise((r) => setTimeout(r, 1));
    }
    const events = text.split("\n\n").filter(Boolean);
    expect(events).toHaveLength(64);
    expect(events.map((e) => e.slice(6, 8))).toEqual(
      Array.from({ length: 64 }, (_, i) => String(i).padStart(2, "0")),
    );
    expect(text.length).toBe(64 * (6 + 2 + 16_000 + 2));
  });

  it("fails a request whose answer's headers take longer than headersTimeoutMs, as timed out", async () => {
    const before = fx.closedEarly.filter((u) => u === "/hang-headers").length;
    const failed = await fetch(`${fx.url}/hang-headers`, { headersTimeoutMs: 50 }).catch(
      (e: unknown) => e,
    );
    expect(failed).toMatchObject({ code: "UND_ERR_HEADERS_TIMEOUT" });
    expect(timedOut(failed)).toBe(true);
    await until(() => fx.closedEarly.filter((u) => u === "/hang-headers").length > before);
    expect(fx.closedEarly.filter((u) => u === "/hang-headers")).toHaveLength(before + 1);
  });

  it("rejects at once when the signal is already aborted, sending nothing", async () => {
    const sent = fx.bodies.length;
    await expect(fetch(`${fx.url}/sse`, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(fx.bodies.length).toBe(sent);
  });

  it("rejects with the connection's error when nothing listens", async () => {
    const closed = await start();
    const url = closed.url;
    await new Promise((r) => closed.server.close(r));
    await expect(fetch(`${url}/sse`)).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });

  it("refuses a body it cannot send, naming it", async () => {
    await expect(
      fetch(`${fx.url}/sse`, { method: "POST", body: new URLSearchParams({ a: "1" }) }),
    ).rejects.toThrow(/body must be a string or bytes/);
  });
});
