import { describe, expect, it } from "vitest";
import { mapCallToolResult } from "../../../src/tools/mcp/mcp-result.js";

const PNG = Buffer.from("\x89PNG\r\n\x1a\nfake", "latin1").toString("base64");
const b64 = (text: string) => Buffer.from(text).toString("base64");

describe("MCP tool results", () => {
  it("joins text blocks into the output, one a line, and maps isError to an error", () => {
    expect(
      mapCallToolResult(
        {
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b" },
          ],
        },
        1000,
      ),
    ).toEqual({ state: "success", output: "a\nb" });
    expect(
      mapCallToolResult({ content: [{ type: "text", text: "no such file" }], isError: true }, 1000),
    ).toEqual({ state: "error", output: "no such file" });
  });

  it("keeps images, text resources and structured content as data parts", () => {
    const result = mapCallToolResult(
      {
        content: [
          { type: "text", text: "here" },
          { type: "image", data: PNG, mimeType: "image/png" },
          {
            type: "resource",
            resource: { uri: "file:///a.json", mimeType: "application/json", text: '{"a":1}' },
          },
          {
            type: "resource",
            resource: { uri: "file:///b.png", mimeType: "image/png", blob: PNG },
          },
        ],
        structuredContent: { total: 3 },
      },
      10_000,
    );
    expect(result.output).toBe("here");
    expect(result.data).toEqual([
      { mediaType: "image/png", base64: PNG },
      { mediaType: "application/json", base64: b64('{"a":1}') },
      { mediaType: "image/png", base64: PNG },
      { mediaType: "application/json", base64: b64('{"total":3}') },
    ]);
  });

  it("says in the output what it cannot pass on: audio, binary resources, links", () => {
    const result = mapCallToolResult(
      {
        content: [
          { type: "audio", data: b64("RIFF"), mimeType: "audio/wav" },
          {
            type: "resource",
            resource: {
              uri: "file:///x.bin",
              mimeType: "application/octet-stream",
              blob: b64("xx"),
            },
          },
          { type: "resource_link", uri: "file:///c.txt", name: "c.txt", mimeType: "text/plain" },
          { type: "image", data: b64("BM"), mimeType: "image/bmp" },
        ],
      },
      10_000,
    );
    expect(result.data).toBeUndefined();
    const lines = result.output.split("\n");
    expect(lines[0]).toBe(
      "[audio (audio/wav, 4 bytes) not passed on: the model takes images and text documents]",
    );
    expect(lines[1]).toMatch(
      /^\[resource file:\/\/\/x\.bin \(application\/octet-stream, 2 bytes\) not passed on: /,
    );
    expect(lines[2]).toBe("[resource link: c.txt file:///c.txt (text/plain)]");
    expect(lines[3]).toMatch(/^\[image \(image\/bmp, 2 bytes\) not passed on: /);
  });

  it("stays within the byte budget: text is cut with a note, data that does not fit is left out", () => {
    const text = mapCallToolResult({ content: [{ type: "text", text: "é".repeat(100) }] }, 51);
    expect(text.output).toBe(`${"é".repeat(25)}\n[output truncated at 51 bytes]`);

    const image = mapCallToolResult(
      {
        content: [
          { type: "text", text: "small" },
          { type: "image", data: "A".repeat(400), mimeType: "image/png" },
        ],
      },
      200,
    );
    expect(image.data).toBeUndefined();
    expect(image.output).toBe(
      "small\n[image (image/png) left out: over the output limit of 200 bytes]",
    );
  });
});
