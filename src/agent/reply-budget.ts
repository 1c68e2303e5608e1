import { cutUtf8 } from "../tools/output-cap.js";
import type { Block, Msg } from "./types.js";

export { DEFAULT_MAX_REPLY_BYTES, MAX_REPLY_BYTES } from "../common/message-size.js";

/** What each block costs beyond its text: ids, names, state, field tags. */
export const BLOCK_OVERHEAD_BYTES = 128;

/** The error code of a reply that ended because its message reached `maxReplyBytes`. */
export const REPLY_TOO_LARGE = "reply_too_large";

const utf8 = (text: string): number => Buffer.byteLength(text);

/**
 * At least what `value` takes encoded as a google.protobuf.Value: each value, list entry and field
 * adds its tags and lengths (up to 12 bytes), a number 9 bytes.
 */
export function structBytes(value: unknown): number {
  if (typeof value === "string") return 12 + utf8(value);
  let total = 12;
  if (Array.isArray(value)) {
    for (const item of value) total += structBytes(item);
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) total += 12 + utf8(key) + structBytes(item);
  }
  return total;
}

/**
 * What a block costs on the wire, never less than its encoding: a call's input as `inputFactor`
 * says, its rules and decision as JSON, a result's metadata as a Struct (twice for AskUser, whose
 * answers are also sent typed).
 */
export function blockBytes(block: Block): number {
  switch (block.type) {
    case "text":
      return BLOCK_OVERHEAD_BYTES + utf8(block.text);
    case "thinking":
      return BLOCK_OVERHEAD_BYTES + utf8(block.thinking);
    case "tool_call": {
      const { input, ...rest } = block;
      return (
        BLOCK_OVERHEAD_BYTES +
        utf8(JSON.stringify(rest)) +
        utf8(input) * inputFactor(block.name, block.state === "finished")
      );
    }
    case "tool_result": {
      const metadata =
        (block.metadata ? structBytes(block.metadata) : 0) * (block.name === "AskUser" ? 2 : 1);
      // Data as base64 counts more than its bytes, which a DataBlock carries raw.
      const data = (block.data ?? []).reduce(
        (sum, part) =>
          sum + 32 + utf8(part.mediaType) + (part.base64?.length ?? 0) + utf8(part.url ?? ""),
        0,
      );
      return (
        BLOCK_OVERHEAD_BYTES +
        utf8(block.id) +
        utf8(block.name) +
        utf8(block.output) +
        metadata +
        data
      );
    }
  }
}

/**
 * How many times a call's input bytes count: once; for AskUser twice (clients also get it typed, as
 * `ask_user`) and, until it is answered, three times more, kept for its answer, whose output,
 * metadata and typed answers each repeat the questions.
 */
export const inputFactor = (toolName: string, answered = false): number =>
  toolName !== "AskUser" ? 1 : answered ? 2 : 5;

/** What a message's content costs on the wire (see `blockBytes`). */
export function messageBytes(message: Msg): number {
  let total = 0;
  for (const block of message.content) total += blockBytes(block);
  return total;
}

/**
 * The byte budget of a reply's message (`maxReplyBytes`), counted from what the message holds, so
 * it survives parking and restarts. `take` keeps the part of a delta that fits and turns `over`
 * once something did not fit; nothing is kept after that.
 */
export class ReplyBudget {
  /** True once the model sent something past the budget. */
  over = false;

  constructor(
    readonly maxBytes: number,
    private used: number,
  ) {}

  /** The budget of `message`, with what it already holds counted. */
  static of(message: Msg, maxBytes: number): ReplyBudget {
    return new ReplyBudget(maxBytes, messageBytes(message));
  }

  /** Bytes still free. */
  get remaining(): number {
    return Math.max(0, this.maxBytes - this.used);
  }

  /** Counts `bytes` that cannot be cut (a new block); false, and over, when they do not fit. */
  charge(bytes: number): boolean {
    if (this.over || bytes > this.remaining) {
      this.over = true;
      return false;
    }
    this.used += bytes;
    return true;
  }

  /** The part of `delta` that fits, each byte counting `factor` times ("" once over). */
  take(delta: string, factor = 1): string {
    if (this.over) return "";
    const bytes = utf8(delta) * factor;
    if (bytes <= this.remaining) {
      this.used += bytes;
      return delta;
    }
    this.over = true;
    const kept = cutUtf8(delta, Math.floor(this.remaining / factor));
    this.used += utf8(kept) * factor;
    return kept;
  }
}

/** The text block that ends a reply cut at `maxBytes`, for the model and every client. */
export const replyCutMarker = (maxBytes: number): string =>
  `[truncated: this reply passed ${maxBytes} bytes, the agent's maxReplyBytes; the model's further output was dropped and its tool calls of that step were not run]`;
