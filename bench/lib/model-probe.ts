import { request } from "node:http";
import { nowUs } from "./stats.js";

/** What a bare HTTP client sees of one streamed chat completion. */
export interface ModelTiming {
  /** µs from the request's start to the first response byte (headers). */
  firstByte: number;
  /** µs to the first body chunk carrying a text `content` delta. */
  firstText: number;
  /** µs to the end of the response. */
  total: number;
  /** SSE `data:` lines received. */
  chunks: number;
}

/**
 * POSTs `body` to `<baseUrl>/chat/completions` with a plain node:http client (keep-alive agent off)
 * and times the streamed answer.
 */
export function timeCompletion(baseUrl: string, body: unknown): Promise<ModelTiming> {
  const url = new URL(`${baseUrl}/chat/completions`);
  const payload = JSON.stringify({ ...(body as object), stream: true });
  return new Promise((resolve, reject) => {
    const t0 = nowUs();
    let firstText = Number.NaN;
    let chunks = 0;
    let tail = "";
    const req = request(
      url,
      { method: "POST", headers: { "content-type": "application/json" } },
      (res) => {
        const firstByte = nowUs() - t0;
        res.setEncoding("utf8");
        res.on("data", (text: string) => {
          const joined = tail + text;
          const parts = joined.split("\n\n");
          tail = parts.pop() ?? "";
          for (const part of parts) {
            if (!part.startsWith("data: ")) continue;
            chunks++;
            if (Number.isNaN(firstText) && /"content":"[^"]/.test(part)) firstText = nowUs() - t0;
          }
        });
        res.on("end", () => resolve({ firstByte, firstText, total: nowUs() - t0, chunks }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** A chat request with one user message, as Parkway would send it (tools left out). */
export function chatRequest(text: string): unknown {
  return {
    model: "scripted",
    messages: [
      { role: "system", content: "You are a helpful assistant." },
      { role: "user", content: text },
    ],
    stream_options: { include_usage: true },
  };
}
