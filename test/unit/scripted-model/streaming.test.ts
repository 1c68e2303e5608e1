import type OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import {
  type Script,
  type ScriptedModelServer,
  startScriptedModel,
} from "../../../src/model/scripted/index.js";
import { clientFor, collect, userSays } from "./openai-client.js";

type Chunk = OpenAI.ChatCompletionChunk;

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function streamTurn(script: Script, text = "hi"): Promise<Chunk[]> {
  server = await startScriptedModel({ script });
  const stream = await clientFor(server).chat.completions.create({
    model: "m",
    messages: userSays(text),
    stream: true,
    stream_options: { include_usage: true },
  });
  return collect(stream);
}

const choicesOf = (chunks: Chunk[]) => chunks.flatMap((c) => c.choices);
const deltasOf = (chunks: Chunk[]) => choicesOf(chunks).map((c) => c.delta);

describe("scripted model: streaming", () => {
  it("streams text in chunks of chunkSize characters, then finish and usage chunks", async () => {
    const chunks = await streamTurn({
      turns: [{ text: "Hello from the script!", chunkSize: 5 }],
      model: "scripted-test",
    });
    expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    expect(chunks.every((c) => c.model === "scripted-test")).toBe(true);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    const deltas = deltasOf(chunks);
    expect(deltas[0]).toEqual({ role: "assistant", content: "" });
    expect(deltas.slice(1, -1).map((d) => d.content)).toEqual([
      "Hello",
      " from",
      " the ",
      "scrip",
      "t!",
    ]);
    expect(choicesOf(chunks).at(-1)?.finish_reason).toBe("stop");
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    // Estimated at four characters a token: the request's messages as JSON, and the 22-char text.
    const promptTokens = Math.ceil(JSON.stringify(userSays("hi")).length / 4);
    expect(last?.usage).toEqual({
      prompt_tokens: promptTokens,
      completion_tokens: 6,
      total_tokens: promptTokens + 6,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });

  it("uses defaults.chunkSize and reports scripted usage", async () => {
    const chunks = await streamTurn({
      defaults: { chunkSize: 3 },
      turns: [
        { text: "abcdefg", usage: { prompt_tokens: 11, completion_tokens: 7, cached_tokens: 4 } },
      ],
    });
    expect(deltasOf(chunks).map((d) => d.content ?? null)).toEqual(["", "abc", "def", "g", null]);
    expect(chunks.at(-1)?.usage).toEqual({
      prompt_tokens: 11,
      completion_tokens: 7,
      total_tokens: 18,
      prompt_tokens_details: { cached_tokens: 4 },
    });
  });

  it("streams thinking as reasoning_content deltas before the text", async () => {
    const chunks = await streamTurn({
      turns: [{ thinking: "The user greets me.", text: "Hi there.", chunkSize: 10 }],
    });
    const deltas = deltasOf(chunks) as (OpenAI.ChatCompletionChunk.Choice.Delta & {
      reasoning_content?: string;
    })[];
    const reasoning = deltas.filter((d) => d.reasoning_content !== undefined);
    expect(reasoning.map((d) => d.reasoning_content)).toEqual(["The user g", "reets me."]);
    const firstText = deltas.findIndex((d) => d.content === "Hi there.");
    expect(firstText).toBeGreaterThan(deltas.indexOf(reasoning.at(-1)!));
  });

  it("interleaves parallel tool calls and they reassemble by index", async () => {
    const first = { path: "src/index.ts", limit: 20 };
    const second = { command: "ls -la", timeout: 5 };
    const chunks = await streamTurn({
      turns: [
        {
          text: "Looking.",
          toolCalls: [
            { id: "call_read", name: "Read", input: first },
            { name: "Bash", input: second },
          ],
          chunkSize: 7,
        },
      ],
    });
    const calls = deltasOf(chunks).flatMap((d) => d.tool_calls ?? []);
    expect(calls[0]).toEqual({
      index: 0,
      id: "call_read",
      type: "function",
      function: { name: "Read", arguments: "" },
    });
    expect(calls[1]).toEqual({
      index: 1,
      id: "call_1",
      type: "function",
      function: { name: "Bash", arguments: "" },
    });
    // Fragments alternate between the two calls while both have some left.
    expect(calls.slice(2, 6).map((c) => c.index)).toEqual([0, 1, 0, 1]);
    expect(calls.slice(2).every((c) => c.id === undefined && c.function?.name === undefined)).toBe(
      true,
    );
    const args = ["", ""];
    for (const c of calls) args[c.index] += c.function?.arguments ?? "";
    expect(JSON.parse(args[0]!)).toEqual(first);
    expect(JSON.parse(args[1]!)).toEqual(second);
    expect(choicesOf(chunks).at(-1)?.finish_reason).toBe("tool_calls");
  });

  it("sends a string input raw, so malformed JSON reaches the client unchanged", async () => {
    const raw = '{"path": "a.txt", "limit": ';
    const chunks = await streamTurn({ turns: [{ toolCalls: [{ name: "Read", input: raw }] }] });
    const calls = deltasOf(chunks).flatMap((d) => d.tool_calls ?? []);
    expect(calls.map((c) => c.function?.arguments ?? "").join("")).toBe(raw);
    expect(calls[0]?.id).toBe("call_1");
  });

  it("answers a non-streaming request with one chat.completion", async () => {
    server = await startScriptedModel({
      script: {
        turns: [
          {
            thinking: "hmm",
            text: "Done.",
            toolCalls: [{ id: "c1", name: "Echo", input: { a: 1 } }],
          },
        ],
      },
    });
    const completion = await clientFor(server).chat.completions.create({
      model: "requested-model",
      messages: userSays("go"),
    });
    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe("requested-model");
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
    expect(completion.choices[0]?.message).toMatchObject({
      role: "assistant",
      content: "Done.",
      reasoning_content: "hmm",
      tool_calls: [
        { id: "c1", type: "function", function: { name: "Echo", arguments: '{"a":1}' } },
      ],
    });
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
  });

  it("lists the script's model and answers unknown paths with a 404 JSON error", async () => {
    server = await startScriptedModel({ script: { turns: [], model: "demo-1" } });
    const models = await clientFor(server).models.list();
    expect(models.data.map((m) => m.id)).toEqual(["demo-1"]);
    const response = await fetch(`${server.url}/embeddings`, { method: "POST", body: "{}" });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: {
        message: "unknown path: POST /v1/embeddings",
        type: "invalid_request_error",
        param: null,
        code: "not_found",
      },
    });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it("rejects a body that is not a chat request with a 400 naming the field", async () => {
    server = await startScriptedModel({ script: { turns: [{ text: "x" }] } });
    const response = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m" }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/^invalid request: messages: /);
    expect(server.requests).toEqual([]);
  });
});

/** A streamed turn's response, read by a raw HTTP client: its reads and whole body. */
async function rawStream(
  url: string,
  options: { pauseMs?: number } = {},
): Promise<{ reads: number; body: string }> {
  const { request } = await import("node:http");
  const payload = JSON.stringify({ model: "m", messages: userSays("hi"), stream: true });
  return new Promise((resolve, reject) => {
    const req = request(`${url}/chat/completions`, { method: "POST" }, (res) => {
      let reads = 0;
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (part: string) => {
        reads += 1;
        body += part;
        // Reading slowly: the server's writes back up and have to wait for room.
        if (options.pauseMs && reads % 8 === 0) {
          res.pause();
          setTimeout(() => res.resume(), options.pauseMs);
        }
      });
      res.on("end", () => resolve({ reads, body }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(payload);
  });
}

const sseContents = (body: string) =>
  body
    .split("\n\n")
    .filter((e) => e.startsWith("data: {"))
    .map((e) => (JSON.parse(e.slice(6)) as Chunk).choices[0]?.delta.content ?? "")
    .join("");

describe("scripted model: an undelayed turn", () => {
  it("goes out as fast as a slow reader takes it: every chunk in order, then [DONE]", async () => {
    const text = Array.from({ length: 20_000 }, (_, i) => String(i % 10)).join("");
    server = await startScriptedModel({
      script: { turns: [{ text, chunkSize: 4, repeat: true }] },
    });
    const { body } = await rawStream(server.url, { pauseMs: 5 });
    // 5,000 chunks of about 150 bytes: far more than a socket's buffer, so writes waited for room.
    expect(body.length).toBeGreaterThan(500_000);
    expect(sseContents(body)).toBe(text);
    expect(body.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(body.indexOf("data: [DONE]")).toBe(body.length - "data: [DONE]\n\n".length);
  });

  it("is written at once, while a turn with delayMs is written chunk by chunk", async () => {
    server = await startScriptedModel({
      script: {
        turns: [
          { match: { lastUser: "^hi$" }, text: "abcdefghijklmnop", chunkSize: 2, delayMs: 5 },
          { match: { lastUser: "^hi$" }, text: "abcdefghijklmnop", chunkSize: 2 },
        ],
      },
    });
    const paced = await rawStream(server.url);
    const fast = await rawStream(server.url);
    expect(sseContents(paced.body)).toBe("abcdefghijklmnop");
    expect(sseContents(fast.body)).toBe("abcdefghijklmnop");
    // Eight text chunks 5 ms apart arrive in as many reads; without a delay, in one or two.
    expect(paced.reads).toBeGreaterThanOrEqual(8);
    expect(fast.reads).toBeLessThanOrEqual(2);
  });
});
