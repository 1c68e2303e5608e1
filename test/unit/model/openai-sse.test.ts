import { APIError } from "openai";
import { describe, expect, it, vi } from "vitest";
import { completionChunks, sseData } from "../../../src/model/openai-sse.js";

async function* pieces(...parts: (string | Buffer)[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) {
    await Promise.resolve();
    yield typeof part === "string" ? Buffer.from(part) : part;
  }
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const chunk = (content: string) =>
  JSON.stringify({
    id: "c",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta: { content } }],
  });

describe("server-sent events of a streamed completion", () => {
  it("yields each event's data, whatever the reads, with \\n\\n and \\r\\n\\r\\n ends", async () => {
    const text =
      "data: one\n\ndata: two\r\n\r\n: a comment\n\nevent: x\ndata: three\ndata: lines\n\n";
    const whole = await all(sseData(pieces(text)));
    expect(whole).toEqual(["one", "two", "three\nlines"]);
    // The same bytes cut at every position give the same events.
    for (let cut = 1; cut < text.length; cut++) {
      expect(await all(sseData(pieces(text.slice(0, cut), text.slice(cut))))).toEqual(whole);
    }
  });

  it("keeps a character split between two reads", async () => {
    const bytes = Buffer.from("data: héllo ✓\n\n");
    const at = bytes.indexOf(0xa9); // inside "é" … the second byte of ✓'s three
    const parts = [bytes.subarray(0, at), bytes.subarray(at, at + 3), bytes.subarray(at + 3)];
    expect(await all(sseData(pieces(...parts)))).toEqual(["héllo ✓"]);
  });

  it("reads data after the last blank line as an event, as the SDK does", async () => {
    expect(await all(sseData(pieces("data: a\n\ndata:b")))).toEqual(["a", "b"]);
  });

  it("ends the chunks at [DONE] without waiting for the body's end, and reads the rest apart", async () => {
    let finish!: () => void;
    const ended = new Promise<void>((resolve) => (finish = resolve));
    let read = false;
    async function* body(): AsyncGenerator<Uint8Array> {
      yield Buffer.from(`data: ${chunk("Hel")}\n\ndata: ${chunk("lo")}\n\n`);
      yield Buffer.from("data: [DONE]\n\n");
      await ended; // the server has not ended the body yet
      yield Buffer.from(`data: ${chunk("late")}\n\n`);
      read = true;
    }
    const response = new Response(null);
    Object.defineProperty(response, "body", { value: body() });
    const chunks = (await all(completionChunks(response))).flat();
    expect(chunks.map((c) => c.choices[0]?.delta.content)).toEqual(["Hel", "lo"]);
    expect(read).toBe(false);
    finish();
    await vi.waitFor(() => expect(read).toBe(true)); // every byte was read, nothing yielded
  });

  it("closes a body that does not end after [DONE] within ten seconds", async () => {
    vi.useFakeTimers();
    try {
      const destroyed = vi.fn();
      const body = Object.assign(
        (async function* () {
          yield Buffer.from(`data: ${chunk("a")}\n\ndata: [DONE]\n\n`);
          await new Promise(() => {}); // never ends
        })(),
        { destroy: destroyed },
      );
      const response = new Response(null);
      Object.defineProperty(response, "body", { value: body });
      expect((await all(completionChunks(response))).flat()).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(9_999);
      expect(destroyed).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(destroyed).toHaveBeenCalledOnce();
    } finally {
      vi.useRealTimers();
    }
  });

  it("gives the chunks of one read together, in order", async () => {
    const response = new Response(null);
    const body = pieces(
      `data: ${chunk("a")}\n\ndata: ${chunk("b")}\n\ndata: ${chunk("c")}`,
      `\n\ndata: ${chunk("d")}\n\n: keep-alive\n\n`,
      ": only a comment\n\n",
      `data: ${chunk("e")}\n\ndata: [DONE]\n\n`,
    );
    Object.defineProperty(response, "body", { value: body });
    const reads = await all(completionChunks(response));
    expect(reads.map((read) => read.map((c) => c.choices[0]?.delta.content))).toEqual([
      ["a", "b"],
      ["c", "d"],
      ["e"],
    ]);
  });

  it("gives the chunks before an error in the same read, then throws it", async () => {
    const response = new Response(null);
    const body = pieces(
      `data: ${chunk("a")}\n\ndata: {"error":{"message":"overloaded"}}\n\ndata: ${chunk("b")}\n\n`,
    );
    Object.defineProperty(response, "body", { value: body });
    const got: string[] = [];
    const read = (async () => {
      for await (const chunks of completionChunks(response)) {
        for (const c of chunks) got.push(c.choices[0]?.delta.content ?? "");
      }
    })();
    await expect(read).rejects.toThrow(/overloaded/);
    expect(got).toEqual(["a"]);
  });

  it("throws an event that carries an error as the SDK's APIError", async () => {
    const body = pieces(
      `data: ${chunk("a")}\n\n`,
      `data: {"error":{"message":"overloaded","type":"server_error"}}\n\n`,
    );
    const response = new Response(null);
    Object.defineProperty(response, "body", { value: body });
    const read = all(completionChunks(response));
    await expect(read).rejects.toBeInstanceOf(APIError);
    await expect(read).rejects.toThrow(/overloaded/);
  });

  it("throws on data that is not JSON, naming nothing it made up", async () => {
    const response = new Response(null);
    Object.defineProperty(response, "body", { value: pieces("data: {not json\n\n") });
    await expect(all(completionChunks(response))).rejects.toBeInstanceOf(SyntaxError);
  });
});
