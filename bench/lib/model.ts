import type { Script } from "../../src/model/scripted/index.js";

/** The tool the parked calls name (see bench/servers/parkway-server.ts). */
export const NOOP_TOOL = "bench_noop";

/** Characters per streamed text delta (the scripted model's default). */
export const DELTA_CHARS = 8;

/**
 * The benchmarks' script, every turn repeatable and chosen by the user's text: "ping" → a short
 * text reply; "park" → one call of bench_noop (asks for a confirmation, so the reply parks);
 * "first" → a short text streamed in 8-character deltas; "stream" → `streamDeltas` deltas of
 * 8 characters; a bench_noop result → "done" (how a resumed reply ends).
 */
export function benchScript(streamDeltas: number): Script {
  const text = "lorem ip".repeat(streamDeltas);
  return {
    turns: [
      { match: { lastUser: "^ping$" }, repeat: true, text: "pong" },
      {
        match: { lastUser: "^park$" },
        repeat: true,
        chunkSize: 1000,
        toolCalls: [{ name: NOOP_TOOL, input: { note: "parked by the benchmark" } }],
      },
      { match: { lastUser: "^first$" }, repeat: true, text: "Hello from the scripted model." },
      { match: { lastUser: "^stream$" }, repeat: true, text, chunkSize: DELTA_CHARS },
      { match: { toolName: NOOP_TOOL }, repeat: true, text: "done" },
    ],
    defaults: { chunkSize: DELTA_CHARS, delayMs: 0 },
  };
}
