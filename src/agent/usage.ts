import type { Usage } from "./types.js";

/**
 * The sum of two usages, either of which may be absent (no model call counted yet, or a record
 * stored before usage was kept): absent counts as zeros.
 */
export function addUsage(a: Usage | undefined, b: Usage | undefined): Usage {
  return {
    inputTokens: (a?.inputTokens ?? 0) + (b?.inputTokens ?? 0),
    outputTokens: (a?.outputTokens ?? 0) + (b?.outputTokens ?? 0),
    cacheReadTokens: (a?.cacheReadTokens ?? 0) + (b?.cacheReadTokens ?? 0),
    cacheWriteTokens: (a?.cacheWriteTokens ?? 0) + (b?.cacheWriteTokens ?? 0),
  };
}
