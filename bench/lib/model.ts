import type * as ScriptedSources from "../../src/model/scripted/index.js";
import type { Script } from "../../src/model/scripted/index.js";

/**
 * The scripted model's module: compiled (dist/, which `ensureBuilt` in bench/lib/stack.ts builds
 * first) or its TypeScript sources. Compiled, it costs the load side's core less per request.
 */
export async function scriptedModel(compiled: boolean): Promise<typeof ScriptedSources> {
  return compiled
    ? ((await import(
        new URL("../../dist/model/scripted/index.js", import.meta.url).href
      )) as typeof ScriptedSources)
    : import("../../src/model/scripted/index.js");
}

/** The tool the parked calls name (see bench/servers/parkway-server.ts). */
export const NOOP_TOOL = "bench_noop";

/** Characters per streamed text delta (the scripted model's default). */
export const DELTA_CHARS = 8;

/** The "paced" turn: this many text deltas, `PACED_MS` apart (a model streaming 500 deltas/s). */
export const PACED_DELTAS = 200;
export const PACED_MS = 2;

/**
 * The benchmarks' script, every turn repeatable and chosen by the user's text: "ping" → a short
 * text reply; "park" → one call of bench_noop (asks for a confirmation, so the reply parks);
 * "first" → a short text streamed in 8-character deltas; "stream" → `streamDeltas` deltas of
 * 8 characters, as fast as the model can; "paced" → `PACED_DELTAS` deltas `PACED_MS` apart; a
 * bench_noop result → "done" (how a resumed reply ends).
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
      {
        match: { lastUser: "^paced$" },
        repeat: true,
        text: "lorem ip".repeat(PACED_DELTAS),
        chunkSize: DELTA_CHARS,
        delayMs: PACED_MS,
      },
      { match: { toolName: NOOP_TOOL }, repeat: true, text: "done" },
    ],
    defaults: { chunkSize: DELTA_CHARS, delayMs: 0 },
  };
}
