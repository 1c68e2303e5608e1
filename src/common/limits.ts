import { ParkwayError } from "./errors.js";

/** RESOURCE_EXHAUSTED naming the limit that was reached and its value. */
export function limitReached(name: string, limit: number, what: string): ParkwayError {
  return new ParkwayError("resource_exhausted", `limit ${name} (${limit}) reached: ${what}`, {
    reason: "LIMIT_EXCEEDED",
    metadata: { limit: name, value: String(limit) },
  });
}

/** A token bucket: `rate` tokens a second, holding at most `burst`. */
export class RateLimiter {
  private tokens: number;
  private last = Date.now();

  constructor(
    private readonly rate: number,
    private readonly burst: number = rate,
  ) {
    this.tokens = burst;
  }

  /** Takes a token; false when none is left. */
  take(): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
