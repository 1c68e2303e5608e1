import type { ToolResult } from "./tool.js";

/** An expected failure the model reads, e.g. a missing file or a path outside the working dirs. */
export function errorResult(output: string, metadata?: Record<string, unknown>): ToolResult {
  return metadata === undefined ? { state: "error", output } : { state: "error", output, metadata };
}

/** The result of a call stopped by `ctx.signal`. */
export function interruptedResult(): ToolResult {
  return { state: "error", output: "interrupted", metadata: { interrupted: true } };
}
