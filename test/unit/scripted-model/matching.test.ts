import type OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { type ScriptedModelServer, startScriptedModel } from "../../../src/model/scripted/index.js";
import { clientFor, collect } from "./openai-client.js";

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Message = OpenAI.ChatCompletionMessageParam;

/** Streams one request and returns the reply text, or the tool call names when it made calls. */
async function ask(client: OpenAI, messages: Message[]): Promise<string> {
  const chunks = await collect(
    await client.chat.completions.create({ model: "m", messages, stream: true }),
  );
  const deltas = chunks.flatMap((c) => c.choices.map((choice) => choice.delta));
  const names = deltas.flatMap((d) => d.tool_calls ?? []).flatMap((t) => t.function?.name ?? []);
  return names.length > 0
    ? `calls:${names.join(",")}`
    : deltas.map((d) => d.content ?? "").join("");
}

const user = (content: string): Message => ({ role: "user", content });

/** A conversation that ends with the result of one tool call. */
function afterTool(name: string, result: string, id = "call_9"): Message[] {
  return [
    user("please"),
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name, arguments: "{}" } }],
    },
    { role: "tool", tool_call_id: id, content: result },
  ];
}

describe("scripted model: turn selection", () => {
  it("prefers a matching turn, else plays the unmatched turns in order", async () => {
    server = await startScriptedModel({
      script: {
        turns: [
          { match: { toolName: "Read" }, text: "after Read" },
          {
            match: { lastUser: "weather" },
            toolCalls: [{ name: "Weather", input: { city: "Paris" } }],
          },
          { text: "first in order" },
          { text: "second in order" },
        ],
      },
    });
    const client = clientFor(server);
    expect(await ask(client, [user("hello")])).toBe("first in order");
    expect(await ask(client, [user("what is the weather like?")])).toBe("calls:Weather");
    expect(await ask(client, afterTool("Bash", "ok"))).toBe("second in order");
    expect(await ask(client, afterTool("Read", "file text"))).toBe("after Read");
    expect(server.played).toEqual([2, 1, 3, 0]);
    const error = await ask(client, [user("weather again")]).catch((err: unknown) => err);
    expect(error).toMatchObject({ status: 400, code: "script_exhausted" });
  });

  it("matches lastUser only when the last message is the user's, in its text parts too", async () => {
    server = await startScriptedModel({
      script: {
        turns: [
          { match: { lastUser: "^refund" }, text: "refunding" },
          { text: "fallback", repeat: true },
        ],
      },
    });
    const client = clientFor(server);
    expect(await ask(client, [user("refund"), ...afterTool("Pay", "refund sent")])).toBe(
      "fallback",
    );
    expect(await ask(client, [user("no refund")])).toBe("fallback");
    const parts: Message = { role: "user", content: [{ type: "text", text: "refund it" }] };
    expect(await ask(client, [parts])).toBe("refunding");
    expect(server.played).toEqual([1, 1, 0]);
  });

  it("matches lastToolResult against the content of the last tool message", async () => {
    server = await startScriptedModel({
      script: {
        turns: [
          { match: { lastToolResult: "ENOENT", toolName: "Read" }, text: "no such file" },
          { match: { lastToolResult: "." }, text: "got a result", repeat: true },
        ],
      },
    });
    const client = clientFor(server);
    expect(await ask(client, afterTool("Bash", "ENOENT"))).toBe("got a result");
    expect(await ask(client, afterTool("Read", "error: ENOENT"))).toBe("no such file");
    expect(await ask(client, afterTool("Read", "error: ENOENT"))).toBe("got a result");
  });

  it("records every request body, tool results and tools included", async () => {
    server = await startScriptedModel({
      script: {
        turns: [
          { toolCalls: [{ id: "call_9", name: "Add", input: { a: 40, b: 2 } }] },
          { text: "42" },
        ],
      },
    });
    const client = clientFor(server);
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: "function",
        function: {
          name: "Add",
          description: "adds",
          parameters: { type: "object", properties: { a: { type: "number" } } },
        },
      },
    ];
    await collect(
      await client.chat.completions.create({
        model: "m",
        messages: [user("add")],
        tools,
        stream: true,
      }),
    );
    const second = afterTool("Add", '{"sum":42}');
    expect(await ask(client, second)).toBe("42");
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]).toMatchObject({ model: "m", stream: true, tools });
    expect(server.requests[1]?.messages.at(-1)).toEqual({
      role: "tool",
      tool_call_id: "call_9",
      content: '{"sum":42}',
    });
    expect(server.requests[1]?.messages[1]).toMatchObject({
      role: "assistant",
      tool_calls: [{ id: "call_9", function: { name: "Add" } }],
    });
  });
});
