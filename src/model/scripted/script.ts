import { readFile } from "node:fs/promises";
import { z } from "zod";
import { zodViolations } from "../../common/zod-violations.js";

/**
 * The script a scripted model plays: a JSON file of turns, each one model response. Every object is
 * strict, so a misspelt key is an error that names it.
 */

/** A regular expression source (searched, not anchored: `"refund"` matches "please refund me"). */
const regexSource = z.string().superRefine((value, ctx) => {
  try {
    new RegExp(value);
  } catch (err) {
    ctx.addIssue({
      code: "custom",
      message: `invalid regular expression: ${(err as Error).message}`,
    });
  }
});

const positiveInt = z.number().int().min(1);
const nonNegativeInt = z.number().int().min(0);

/**
 * Chooses a turn by the request's last message instead of by order. Every given condition must hold;
 * `lastUser` needs the last message to be a user message, `lastToolResult` and `toolName` a tool
 * message.
 */
export const turnMatchSchema = z.strictObject({
  /** Searched in the text of the last message, which must be a user message. */
  lastUser: regexSource.optional(),
  /** Searched in the content of the last message, which must be a tool result. */
  lastToolResult: regexSource.optional(),
  /** The name of the tool whose result is the last message. */
  toolName: z.string().min(1).optional(),
});

/** One tool call the turn makes. */
export const scriptToolCallSchema = z.strictObject({
  /** The call id; default `call_<n>`, numbered per server. */
  id: z.string().min(1).optional(),
  /** The tool's name. */
  name: z.string().min(1),
  /** The arguments: an object is sent as JSON, a string is sent raw (so it may be malformed JSON). */
  input: z.union([z.record(z.string(), z.unknown()), z.string()], {
    error: "expected a JSON object, or a string sent as raw arguments",
  }),
});

/**
 * How a turn fails instead of answering. Exactly one of `status`, `stall`, `cutAfterChunks`. The turn
 * fails `times` consecutive requests (default: every request), then plays normally.
 */
export const turnFailureSchema = z
  .strictObject({
    /** Answer with this HTTP status and an OpenAI-style error body. */
    status: z.number().int().min(400).max(599).optional(),
    /** The error message of a `status` failure. */
    message: z.string().optional(),
    /** Sent as `retry-after-ms` with a `status` failure (a client waits that long to retry). */
    retryAfterMs: nonNegativeInt.optional(),
    /** Send the response headers, then nothing until the client disconnects. */
    stall: z.literal(true).optional(),
    /** Stream this many SSE chunks (the first carries the role), then destroy the connection. */
    cutAfterChunks: nonNegativeInt.optional(),
    /** Fail this many consecutive requests, then play the turn; default: fail every request. */
    times: positiveInt.optional(),
  })
  .superRefine((value, ctx) => {
    const kinds = [value.status, value.stall, value.cutAfterChunks].filter((v) => v !== undefined);
    if (kinds.length !== 1) {
      ctx.addIssue({
        code: "custom",
        message: "expected exactly one of status, stall, cutAfterChunks",
      });
    }
    if (value.status === undefined && (value.message ?? value.retryAfterMs) !== undefined) {
      ctx.addIssue({ code: "custom", message: "message and retryAfterMs need status" });
    }
  });

/** Token counts reported for the turn instead of the rough estimate. */
export const turnUsageSchema = z.strictObject({
  prompt_tokens: nonNegativeInt,
  completion_tokens: nonNegativeInt,
  /** Reported as `prompt_tokens_details.cached_tokens`. */
  cached_tokens: nonNegativeInt.optional(),
});

/** One model response. Streamed in order: thinking, text, then the tool calls interleaved. */
export const turnSchema = z.strictObject({
  /** Choose this turn when the request's last message matches (see `turnMatchSchema`). */
  match: turnMatchSchema.optional(),
  /** May be played any number of times; otherwise a turn plays once. */
  repeat: z.boolean().optional(),
  /** Streamed as `reasoning_content` deltas. */
  thinking: z.string().optional(),
  /** Streamed as `content` deltas. */
  text: z.string().optional(),
  /** Tool calls; several are streamed interleaved, like parallel tool calls. */
  toolCalls: z.array(scriptToolCallSchema).optional(),
  /** Default: "tool_calls" when the turn makes tool calls, else "stop". */
  finishReason: z.string().min(1).optional(),
  /** Default: estimated at about four characters per token. */
  usage: turnUsageSchema.optional(),
  /** Characters per streamed delta; overrides `defaults.chunkSize`. */
  chunkSize: positiveInt.optional(),
  /**
   * Milliseconds between streamed chunks; overrides `defaults.delayMs`. Without a delay, the chunks
   * go out as fast as the connection takes them, joined into large writes.
   */
  delayMs: nonNegativeInt.optional(),
  /** Fail instead of answering (see `turnFailureSchema`). */
  fail: turnFailureSchema.optional(),
});

/** A whole script. */
export const scriptSchema = z.strictObject({
  /** Turns without `match` play in order; a turn with `match` plays when its match holds. */
  turns: z.array(turnSchema),
  defaults: z
    .strictObject({
      /** Characters per streamed delta; default 8. */
      chunkSize: positiveInt.optional(),
      /** Milliseconds between streamed chunks; default 0. */
      delayMs: nonNegativeInt.optional(),
    })
    .optional(),
  /** The model name reported in responses and by `GET /v1/models`; default: the requested model. */
  model: z.string().min(1).optional(),
});

export type TurnMatch = z.infer<typeof turnMatchSchema>;
export type ScriptToolCall = z.infer<typeof scriptToolCallSchema>;
export type TurnFailure = z.infer<typeof turnFailureSchema>;
export type TurnUsage = z.infer<typeof turnUsageSchema>;
export type Turn = z.infer<typeof turnSchema>;
export type Script = z.infer<typeof scriptSchema>;

/** Default characters per streamed delta. */
export const DEFAULT_CHUNK_SIZE = 8;

/** A script that cannot be used; `message` is one line naming the offending key path. */
export class ScriptError extends Error {
  override readonly name = "ScriptError";
}

/** Validates a script; throws `ScriptError` naming every offending key path. */
export function parseScript(value: unknown, source = "script"): Script {
  const result = scriptSchema.safeParse(value);
  if (result.success) return result.data;
  const violations = zodViolations(result.error).map((v) => `${v.field}: ${v.description}`);
  throw new ScriptError(`invalid ${source}: ${violations.join("; ")}`);
}

/** Reads and validates a script file; throws `ScriptError` (one line) when it cannot be used. */
export async function loadScript(file: string): Promise<Script> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new ScriptError(`cannot read script ${file}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ScriptError(`script ${file} is not valid JSON: ${(err as Error).message}`);
  }
  return parseScript(parsed, `script ${file}`);
}
