import type { z } from "zod";
import type { FieldViolation } from "./errors.js";

/** Renders a zod issue path as a dot path with indices: `rules[0].tool_name`. */
export function formatPath(path: readonly PropertyKey[], prefix = ""): string {
  let out = prefix;
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}

/**
 * Turns zod issues into field violations, one per issue; an unknown key becomes a violation on that
 * key itself, so the message names it.
 */
export function zodViolations(error: z.ZodError, prefix = ""): FieldViolation[] {
  const out: FieldViolation[] = [];
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        out.push({ field: formatPath([...issue.path, key], prefix), description: "unknown key" });
      }
      continue;
    }
    out.push({ field: formatPath(issue.path, prefix) || "(root)", description: issue.message });
  }
  return out;
}
