import { z } from "zod";

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a duration: a whole number of ms, or "500ms", "30s", "5m", "1h"; else undefined. */
function durationMs(value: number | string): number | undefined {
  if (typeof value === "number") return Number.isInteger(value) && value >= 0 ? value : undefined;
  const [, n, unit] = /^(\d+)(ms|s|m|h)$/.exec(value) ?? [];
  if (n === undefined || unit === undefined) return undefined;
  return Number(n) * (DURATION_UNITS[unit] ?? 1);
}

/**
 * A duration: a positive whole number of milliseconds, or a string such as "500ms", "30s", "5m",
 * "1h"; parsed to milliseconds. With `bounds`, it must lie between `min` and `max` inclusive (ms),
 * and the error names both, as written in `text`.
 */
export function duration(bounds?: { min: number; max: number; text: [string, string] }) {
  const expected = bounds
    ? `expected a duration from ${bounds.text[0]} to ${bounds.text[1]}, such as "30s" or milliseconds`
    : 'expected a duration such as "30s", "5m" or milliseconds';
  return z.union([z.number(), z.string()], { error: expected }).transform((value, ctx) => {
    const ms = durationMs(value);
    if (ms === undefined || ms < (bounds?.min ?? 1) || (bounds && ms > bounds.max)) {
      ctx.addIssue({ code: "custom", message: expected });
      return z.NEVER;
    }
    return ms;
  });
}
