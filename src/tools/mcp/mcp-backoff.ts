/** The delays between reconnection attempts: doubling from `initialMs` up to `maxMs`. */
export interface Backoff {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 250, maxMs: 30_000 };

/** The delay before the next attempt, after `failures` failed ones in a row. */
export function backoffDelay(backoff: Backoff, failures: number): number {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** failures);
}
