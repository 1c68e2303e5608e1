/** Most characters of values kept; past it, everything is forgotten and learned again. */
const MAX_CHARS = 8 << 20;
/** Most records kept, for the same reason. */
const MAX_RECORDS = 50_000;

/**
 * The stored values of the records the writer's checks look at (a session's lease, its parked
 * reply, …), as its own transactions last left them: learned when a transaction reads them
 * `FOR UPDATE`, and kept up to date by the writes it commits. Another node's write makes an entry
 * stale; the write that expects it finds that out in the database and takes the long way (see
 * `GroupWriter`). Keyed by `at(kind, key)`; `null` is a record known to be absent.
 */
export class CheckedValues {
  private readonly values = new Map<string, string | null>();
  private chars = 0;

  /** The value last seen of a record (`null`: absent), or undefined when not known. */
  get(id: string): string | null | undefined {
    return this.values.get(id);
  }

  /** Remembers what a transaction read of a checked record (`undefined`: it is absent). */
  learn(id: string, value: string | undefined): void {
    this.set(id, value ?? null);
  }

  /** Follows a committed put or delete: only records already known are kept up to date. */
  wrote(id: string, value: string | undefined): void {
    if (this.values.has(id)) this.set(id, value ?? null);
  }

  /** Forgets everything: after a failed transaction, whose outcome is unknown. */
  clear(): void {
    this.values.clear();
    this.chars = 0;
  }

  private set(id: string, value: string | null): void {
    const old = this.values.get(id);
    this.chars += (value?.length ?? 0) - (old?.length ?? 0);
    this.values.set(id, value);
    if (this.chars > MAX_CHARS || this.values.size > MAX_RECORDS) this.clear();
  }
}
