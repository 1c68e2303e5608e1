import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/sdk/types.js";
import { type DataPart, dataPartProblem } from "../data-part.js";
import { cutUtf8 } from "../output-cap.js";
import type { ToolResult } from "../tool.js";

/** What a data part costs against the output budget: its media type, base64 and framing. */
const dataCost = (part: DataPart): number =>
  32 + Buffer.byteLength(part.mediaType) + (part.base64?.length ?? 0);

/**
 * Turns an MCP tool result into a Parkway one within `maxBytes`: text content joined (one block a
 * line) into `output`; images and embedded resources the model can take (images; text documents)
 * as data parts, other content (audio, binary resources, resource links) as a line saying what it
 * was; `structuredContent` as an `application/json` data part. `isError` makes the state "error".
 * Text past the budget is cut with a note; a data part that does not fit is left out with a line
 * saying so.
 */
export function mapCallToolResult(result: CallToolResult, maxBytes: number): ToolResult {
  let left = maxBytes;
  let truncated = false;
  const lines: string[] = [];
  const data: DataPart[] = [];
  const addText = (text: string) => {
    if (truncated) return;
    const cost = Buffer.byteLength(text) + (lines.length > 0 ? 1 : 0);
    if (cost <= left) {
      lines.push(text);
      left -= cost;
      return;
    }
    lines.push(cutUtf8(text, Math.max(0, left - 1)));
    left = 0;
    truncated = true;
  };
  const addData = (part: DataPart, what: string) => {
    const cost = dataCost(part);
    if (cost <= left) {
      data.push(part);
      left -= cost;
    } else {
      addText(`[${what} (${part.mediaType}) left out: over the output limit of ${maxBytes} bytes]`);
    }
  };
  for (const block of result.content ?? []) {
    const mapped = mapBlock(block);
    if (mapped.kind === "text") addText(mapped.text);
    else addData(mapped.part, mapped.what);
  }
  if (result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent);
    addData(
      { mediaType: "application/json", base64: Buffer.from(json).toString("base64") },
      "structured content",
    );
  }
  const note = truncated ? `\n[output truncated at ${maxBytes} bytes]` : "";
  return {
    state: result.isError === true ? "error" : "success",
    output: lines.join("\n") + note,
    ...(data.length > 0 ? { data } : {}),
  };
}

type Mapped = { kind: "text"; text: string } | { kind: "data"; part: DataPart; what: string };

function mapBlock(block: ContentBlock): Mapped {
  switch (block.type) {
    case "text":
      return { kind: "text", text: block.text };
    case "image":
      return asData({ mediaType: block.mimeType, base64: block.data }, "image");
    case "audio":
      return {
        kind: "text",
        text: `[audio (${block.mimeType}, ${base64Bytes(block.data)} bytes) not passed on: the model takes images and text documents]`,
      };
    case "resource": {
      const r = block.resource;
      if ("text" in r && typeof r.text === "string") {
        const part = {
          mediaType: r.mimeType ?? "text/plain",
          base64: Buffer.from(r.text).toString("base64"),
        };
        return dataPartProblem(part.mediaType, { bytes: Buffer.from(r.text) }) === undefined
          ? { kind: "data", part, what: `resource ${r.uri}` }
          : { kind: "text", text: `[resource ${r.uri}]\n${r.text}` };
      }
      const blob = "blob" in r && typeof r.blob === "string" ? r.blob : "";
      return asData(
        { mediaType: r.mimeType ?? "application/octet-stream", base64: blob },
        `resource ${r.uri}`,
      );
    }
    case "resource_link":
      return {
        kind: "text",
        text: `[resource link: ${block.name} ${block.uri}${block.mimeType ? ` (${block.mimeType})` : ""}]${block.description ? ` ${block.description}` : ""}`,
      };
    default:
      return { kind: "text", text: `[content of type ${(block as { type: string }).type}]` };
  }
}

/** A part the model can take, or a line saying what it was. */
function asData(part: DataPart, what: string): Mapped {
  const problem = dataPartProblem(part.mediaType, {
    bytes: Buffer.from(part.base64 ?? "", "base64"),
  });
  if (problem === undefined) return { kind: "data", part, what };
  return {
    kind: "text",
    text: `[${what} (${part.mediaType}, ${base64Bytes(part.base64 ?? "")} bytes) not passed on: ${problem.description}]`,
  };
}

function base64Bytes(base64: string): number {
  return Buffer.from(base64, "base64").length;
}
