import { describe, expect, it } from "vitest";
import type { ModelMessage, ModelToolSpec } from "../../../src/model/model.js";
import { chatRequestBody } from "../../../src/model/openai-body.js";

const history: ModelMessage[] = [
  { role: "system", content: "Be brief." },
  {
    role: "user",
    content: [
      { type: "text", text: "what is this?" },
      { type: "image", url: "data:image/png;base64,AAAA" },
    ],
  },
  { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "Read", input: '{"p":"a"}' }] },
  { role: "tool", toolCallId: "c1", content: 'file "a"\nline two' },
  { role: "assistant", content: "It says hello.", toolCalls: [] },
];
const tools: ModelToolSpec[] = [
  { name: "Read", description: "Reads a file", inputSchema: { type: "object" } },
];

/** The messages of `history` as the Chat Completions API takes them. */
const params = [
  { role: "system", content: "Be brief." },
  {
    role: "user",
    content: [
      { type: "text", text: "what is this?" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
    ],
  },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      { id: "c1", type: "function", function: { name: "Read", arguments: '{"p":"a"}' } },
    ],
  },
  { role: "tool", tool_call_id: "c1", content: 'file "a"\nline two' },
  { role: "assistant", content: "It says hello." },
];

/** The request's params for `messages`, with `tools` offered or none. */
const expected = (messages: object[], withTools: boolean) => ({
  model: "m",
  messages,
  stream: true,
  stream_options: { include_usage: true },
  ...(withTools
    ? {
        tools: [
          {
            type: "function",
            function: { name: "Read", description: "Reads a file", parameters: { type: "object" } },
          },
        ],
        parallel_tool_calls: true,
      }
    : {}),
});

describe("chatRequestBody", () => {
  it("is the JSON of the Chat Completions params, with and without tools", () => {
    expect(JSON.parse(chatRequestBody("m", history, tools))).toEqual(expected(params, true));
    expect(JSON.parse(chatRequestBody("m", history, []))).toEqual(expected(params, false));
    expect(JSON.parse(chatRequestBody("m", [], []))).toEqual(expected([], false));
  });

  it("reuses what it encoded for the same objects and encodes new ones", () => {
    const first = chatRequestBody("m", history, tools);
    expect(chatRequestBody("m", history, tools)).toBe(first);
    const next: ModelMessage = { role: "user", content: 'and "this"?' };
    const longer = [...history, next];
    expect(JSON.parse(chatRequestBody("m", longer, tools))).toEqual(
      expected([...params, { role: "user", content: 'and "this"?' }], true),
    );
  });
});
