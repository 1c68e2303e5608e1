import type { ResultProblem, ToolAnswer, ToolQuestion } from "./tool-question.js";
import type { z } from "zod";
import type { DataPart } from "./data-part.js";

/** What a running tool may use. */
export interface ToolContext {
  /** Aborts on user_interrupt, session deletion or server shutdown; the tool must stop promptly. */
  readonly signal: AbortSignal;
  /** Absolute, resolved (realpath) directories the tool is confined to; the first is Bash's cwd. */
  readonly workingDirectories: readonly string[];
  /** Streams a piece of text output as it is produced (TOOL_RESULT_TEXT_DELTA). */
  emitText(delta: string): void;
  /** The most output bytes the tool may produce; the rest is cut with a note. */
  readonly maxOutputBytes: number;
  /**
   * Asks the person a question while the tool runs: the reply parks on it as on an AskUser
   * (REQUIRE_EXTERNAL_EXECUTION), and resolves with the answer. Resolves "interrupted" when
   * `signal` aborts first, and when the reply stops. Absent where nobody can be asked.
   */
  readonly ask?: (question: ToolQuestion, signal: AbortSignal) => Promise<ToolAnswer>;
  /**
   * The deny or ask rule (as written, `Read(./secret/**)`) that keeps a file from being read
   * unasked, for a tool that searches many files: it leaves such files out, and says how many.
   * `path` as found, `real` where it leads. Absent when no rule could cover a file.
   */
  readonly readRule?: (path: string, real: string) => string | undefined;
}

/** The outcome of a tool run. `output` is the whole text the model reads. */
export interface ToolResult {
  state: "success" | "error";
  output: string;
  /**
   * Data besides the text (see `data-part.ts`), each part one the model can take; counted, as
   * base64, within the run's `maxOutputBytes`.
   */
  data?: DataPart[];
  metadata?: Record<string, unknown>;
}

/** A result of an external tool as the client sent it. */
export interface ExternalResult {
  state: "success" | "error" | "denied" | "interrupted";
  output: string;
  /** Data besides the text: images, JSON and other text documents (see `data-part.ts`). */
  data?: DataPart[];
  metadata?: Record<string, unknown>;
}

export type { ResultProblem } from "./tool-question.js";

/**
 * A tool the agent can call. The input is validated with `inputSchema` before `run`; a failed
 * validation becomes an error result the model sees and `run` is not called.
 */
export interface Tool<I = unknown> {
  readonly name: string;
  /** What it does, for the model. */
  readonly description: string;
  readonly inputSchema: z.ZodType<I>;
  /** True when the client executes it (REQUIRE_EXTERNAL_EXECUTION); `run` is then never called. */
  readonly external?: boolean;
  /** The input's JSON Schema as published to the model, when it is not derived from `inputSchema`. */
  readonly jsonSchema?: Record<string, unknown>;
  /**
   * For an external tool: checks a result sent by the client before it is applied. Returns the
   * problems (empty when valid) and the result to apply, possibly completed (e.g. prose output).
   */
  checkExternalResult?(
    input: I,
    result: ExternalResult,
  ): {
    problems: ResultProblem[];
    result: ExternalResult;
  };
  /** Whether this input only reads (a read-only call needs no confirmation). */
  isReadOnly(input: I): boolean;
  /** Whether this call may run at the same time as other concurrency-safe calls. */
  isConcurrencySafe(input: I): boolean;
  /**
   * Runs the tool. Expected failures (missing file, outside the working directories, non-zero exit)
   * resolve with state "error" and a clear output; only bugs reject.
   */
  run(input: I, ctx: ToolContext): Promise<ToolResult>;
}
