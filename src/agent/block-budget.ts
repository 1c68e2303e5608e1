import { cutUtf8 } from "../tools/output-cap.js";

/**
 * The byte budget of one streamed block. `take` returns the part of a delta that fits; the first
 * delta that does not fit is cut at a character boundary and followed by a marker, and everything
 * after it is dropped. `over` counts every byte the model sent, kept or not.
 */
export class BlockBudget {
  private used = 0;
  /** Every byte the model sent for the block. */
  sent = 0;
  /** True once the budget was passed. */
  over = false;

  constructor(private readonly maxBytes: number) {}

  /** The part of `delta` to keep ("" once over); the marker is appended to the part that passes. */
  take(delta: string, marker: (maxBytes: number) => string): string {
    const bytes = Buffer.byteLength(delta);
    this.sent += bytes;
    if (this.over) return "";
    if (this.used + bytes <= this.maxBytes) {
      this.used += bytes;
      return delta;
    }
    this.over = true;
    return cutUtf8(delta, this.maxBytes - this.used) + marker(this.maxBytes);
  }
}

/** What a cut text or thinking block ends with, for the model and every client. */
export const cutMarker = (maxBytes: number): string =>
  `\n[truncated: this block passed ${maxBytes} bytes, the agent's maxBlockBytes]`;
