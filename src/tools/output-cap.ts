/**
 * Accumulates a tool's text output up to a byte budget (UTF-8). Text past the budget is dropped, cut
 * at a character boundary, and `note` says where it was cut.
 */
export class OutputCap {
  private readonly parts: string[] = [];
  private used = 0;
  /** True once some text has been dropped. */
  truncated = false;

  constructor(readonly maxBytes: number) {}

  /** Bytes still free. */
  get remaining(): number {
    return Math.max(0, this.maxBytes - this.used);
  }

  /**
   * Appends as much of `text` as fits and returns the part that was kept (empty once full), so a
   * streaming caller can forward exactly what was kept.
   */
  push(text: string): string {
    if (this.truncated || text === "") return "";
    const bytes = Buffer.byteLength(text);
    if (bytes <= this.remaining) {
      this.parts.push(text);
      this.used += bytes;
      return text;
    }
    const kept = cutUtf8(text, this.remaining);
    this.parts.push(kept);
    this.used += Buffer.byteLength(kept);
    this.truncated = true;
    return kept;
  }

  /** The note to append once truncated, e.g. "\n[output truncated at 1000 bytes]". */
  get note(): string {
    return this.truncated ? `\n[output truncated at ${this.maxBytes} bytes]` : "";
  }

  /** The kept text. */
  text(): string {
    return this.parts.join("");
  }
}

/** The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`, cut between characters. */
export function cutUtf8(text: string, maxBytes: number): string {
  const buf = Buffer.from(text);
  if (buf.length <= maxBytes) return text;
  let end = Math.max(0, maxBytes);
  // Back up over continuation bytes (10xxxxxx) so the cut falls on a character start.
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString("utf8");
}
