import OpenAI from "openai";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type Script,
  type ScriptedModelServer,
  startScriptedModel,
} from "../../../src/model/scripted/index.js";
import { clientFor, collect, userSays } from "./openai-client.js";

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(script: Script): Promise<ScriptedModelServer> {
  server = await startScriptedModel({ script });
  return server;
}

function streamRequest(client: OpenAI, signal?: AbortSignal) {
  return client.chat.completions.create(
    { model: "m", messages: userSays("hi"), stream: true },
    { signal },
  );
}

const flakyTurn: Script = {
  turns: [
    {
      text: "recovered",
      fail: { status: 500, times: 2, message: "overloaded", retryAfterMs: 0 },
    },
  ],
};

describe("scripted model: failures", () => {
  it("fails `times` requests with the status, then plays the turn (the SDK retries)", async () => {
    const s = await start(flakyTurn);
    const chunks = await collect(await streamRequest(clientFor(s, 2)));
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("recovered");
    expect(s.requests).toHaveLength(3);
    expect(s.played).toEqual([0]);
  });

  it("surfaces the status and message when the client does not retry", async () => {
    const s = await start(flakyTurn);
    const client = clientFor(s, 0);
    const error = await streamRequest(client).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error).toMatchObject({
      status: 500,
      error: { message: "overloaded", type: "server_error" },
    });
    await expect(streamRequest(client)).rejects.toMatchObject({ status: 500 });
    const chunks = await collect(await streamRequest(client));
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("recovered");
    expect(s.played).toEqual([0]);
  });

  it("fails every request when `times` is not given", async () => {
    const s = await start({ turns: [{ text: "never", fail: { status: 429 } }] });
    for (let i = 0; i < 3; i++) {
      await expect(streamRequest(clientFor(s))).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    }
    expect(s.played).toEqual([]);
  });

  it("stalls after the headers until the client aborts, then drops the request", async () => {
    const s = await start({ turns: [{ text: "never sent", fail: { stall: true } }] });
    const controller = new AbortController();
    const stream = await streamRequest(clientFor(s), controller.signal);
    const iterator = stream[Symbol.asyncIterator]();
    const next = iterator.next();
    expect(s.inFlight).toBe(1);
    controller.abort(new Error("user interrupt"));
    // The SDK ends the iteration quietly on abort; the caller must check its signal.
    await expect(next).resolves.toEqual({ done: true, value: undefined });
    await vi.waitFor(() => expect(s.inFlight).toBe(0));
    expect(s.played).toEqual([]);
  });

  it("stalls a non-streaming request until the client aborts", async () => {
    const s = await start({ turns: [{ text: "never sent", fail: { stall: true } }] });
    const controller = new AbortController();
    const pending = clientFor(s).chat.completions.create(
      { model: "m", messages: userSays("hi") },
      { signal: controller.signal },
    );
    await vi.waitFor(() => expect(s.requests).toHaveLength(1));
    controller.abort();
    // The headers have arrived, so the abort interrupts reading the body: a DOM AbortError.
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    await vi.waitFor(() => expect(s.inFlight).toBe(0));
  });

  it("cuts the connection after cutAfterChunks chunks, so the SDK stream throws", async () => {
    const s = await start({
      turns: [{ text: "abcdefghijkl", chunkSize: 2, fail: { cutAfterChunks: 3, times: 1 } }],
    });
    const client = clientFor(s);
    const received: string[] = [];
    const consume = async () => {
      for await (const chunk of await streamRequest(client)) {
        received.push(chunk.choices[0]?.delta.content ?? "");
      }
    };
    await expect(consume()).rejects.toThrow();
    expect(received).toEqual(["", "ab", "cd"]);
    const replay = await collect(await streamRequest(client));
    expect(replay.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("abcdefghijkl");
    expect(s.played).toEqual([0]);
  });

  it("answers a 400 naming the exhausted script, and keeps serving", async () => {
    const s = await start({ turns: [{ text: "only" }] });
    const client = clientFor(s);
    await collect(await streamRequest(client));
    const error = await streamRequest(client).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({
      status: 400,
      code: "script_exhausted",
      error: {
        message:
          'the script has no turn left for this request (1 of 1 turns played; its last message is a user message "hi", after 0 more)',
      },
    });
    expect((await client.models.list()).data).toHaveLength(1);
    expect(s.requests).toHaveLength(2);
  });

  it("reset forgets played turns and failure counts, and can switch scripts", async () => {
    const s = await start(flakyTurn);
    const client = clientFor(s);
    await expect(streamRequest(client)).rejects.toMatchObject({ status: 500 });
    await s.reset();
    expect(s.requests).toEqual([]);
    await expect(streamRequest(client)).rejects.toMatchObject({ status: 500 });
    await expect(streamRequest(client)).rejects.toMatchObject({ status: 500 });
    await collect(await streamRequest(client));
    await s.reset({ turns: [{ text: "new script" }] });
    const chunks = await collect(await streamRequest(client));
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("new script");
    expect(s.played).toEqual([0]);
    expect(s.requests).toHaveLength(1);
  });
});
