import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIUserAbortError,
  BadRequestError,
  InternalServerError,
  RateLimitError,
} from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { chatRequest, type ChatRequestPolicy } from "../../../src/model/openai-request.js";
import { modelFetch } from "../../../src/model/http-fetch.js";

/** How the server answers the next requests, one answer each, in order; then 200. */
type Answer = (res: ServerResponse) => void;

const answers: Answer[] = [];
const seen: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (c: Buffer) => (body += c.toString()));
  req.on("end", () => {
    seen.push({ url: req.url ?? "", headers: req.headers, body });
    const answer = answers.shift();
    if (answer) answer(res);
    else res.writeHead(200, { "content-type": "text/event-stream" }).end("data: [DONE]\n\n");
  });
});
let baseURL = "";

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  answers.length = 0;
  seen.length = 0;
});

function post(policy: Partial<ChatRequestPolicy> = {}) {
  return chatRequest({
    baseURL,
    apiKey: "sk-test",
    maxRetries: 2,
    timeoutMs: 5_000,
    fetch: modelFetch(),
    ...policy,
  });
}

const status =
  (code: number, headers: Record<string, string> = {}, body = `{"error":{"message":"no"}}`) =>
  (res: ServerResponse) =>
    res.writeHead(code, { "content-type": "application/json", ...headers }).end(body);

describe("chatRequest", () => {
  it("POSTs the body to {baseURL}/chat/completions with the key and the extra headers", async () => {
    const response = await post()('{"model":"m"}', new AbortController().signal, {
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    });
    expect(response.status).toBe(200);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      url: "/v1/chat/completions",
      body: '{"model":"m"}',
      headers: {
        authorization: "Bearer sk-test",
        "content-type": "application/json",
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      },
    });
  });

  it("retries 429 and 5xx after the wait the answer asks for, then succeeds", async () => {
    answers.push(status(429, { "retry-after-ms": "5" }), status(503, { "retry-after": "0" }));
    const response = await post()("{}", new AbortController().signal);
    expect(response.status).toBe(200);
    expect(seen).toHaveLength(3);
  });

  it("gives up after maxRetries with the SDK's error for the status and the answer's message", async () => {
    for (let i = 0; i < 3; i++)
      answers.push(status(500, { "retry-after-ms": "1" }, '{"error":{"message":"boom"}}'));
    const failed = await post()("{}", new AbortController().signal).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(InternalServerError);
    expect((failed as InternalServerError).status).toBe(500);
    expect((failed as InternalServerError).message).toMatch(/500.*boom/);
    expect(seen).toHaveLength(3);
  });

  it("does not retry a 400; a text answer becomes the message", async () => {
    answers.push(status(400, {}, "bad request body"));
    const failed = await post()("{}", new AbortController().signal).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(BadRequestError);
    expect((failed as Error).message).toMatch(/bad request body/);
    expect(seen).toHaveLength(1);
  });

  it("obeys x-should-retry over the status", async () => {
    answers.push(status(400, { "x-should-retry": "true", "retry-after-ms": "1" }));
    expect((await post()("{}", new AbortController().signal)).status).toBe(200);
    expect(seen).toHaveLength(2);

    seen.length = 0;
    answers.push(status(429, { "x-should-retry": "false" }));
    const failed = await post()("{}", new AbortController().signal).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(RateLimitError);
    expect(seen).toHaveLength(1);
  });

  it("times out an attempt whose headers do not come, retries it, then says it timed out", async () => {
    const held: ServerResponse[] = [];
    answers.push(
      (res) => held.push(res),
      (res) => held.push(res),
    );
    const failed = await post({ timeoutMs: 100, maxRetries: 1 })(
      "{}",
      new AbortController().signal,
    ).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(APIConnectionTimeoutError);
    expect(seen).toHaveLength(2);
    for (const res of held) res.destroy();
  });

  it("names the cause of a connection that fails", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const failed = await post({ baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 })(
      "{}",
      new AbortController().signal,
    ).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(APIConnectionError);
    expect((failed as Error).message).toMatch(/ECONNREFUSED/);
  });

  /** Posts with `answer` as the server's first answer, aborts once it is seen: what it ends with. */
  async function abortedAfterFirst(answer: Answer): Promise<unknown> {
    answers.push(answer);
    const controller = new AbortController();
    const pending = post()("{}", controller.signal).catch((e: unknown) => e);
    while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error("stop"));
    return pending;
  }

  it("an abort ends the wait before a retry at once", async () => {
    expect(await abortedAfterFirst(status(503, { "retry-after-ms": "30000" }))).toBeInstanceOf(
      APIUserAbortError,
    );
    expect(seen).toHaveLength(1);
  });

  it("an abort before the headers ends the attempt", async () => {
    const held: ServerResponse[] = [];
    expect(await abortedAfterFirst((res) => held.push(res))).toBeInstanceOf(APIUserAbortError);
    expect(seen).toHaveLength(1);
    for (const res of held) res.destroy();
  });
});
