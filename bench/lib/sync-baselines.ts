import { closeSync, fdatasyncSync, openSync, writeSync } from "node:fs";
import path from "node:path";
import { ClassicLevel } from "classic-level";
import { nowUs } from "./stats.js";

/** `n` times: write `bytes` bytes to a file in `dir` and fdatasync it; durations in µs. */
export function fdatasyncSamples(dir: string, n: number, bytes = 1024): number[] {
  const fd = openSync(path.join(dir, "fdatasync.bin"), "w");
  const data = Buffer.alloc(bytes, 120);
  const out: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const t0 = nowUs();
      writeSync(fd, data);
      fdatasyncSync(fd);
      out.push(nowUs() - t0);
    }
  } finally {
    closeSync(fd);
  }
  return out;
}

/** A bare classic-level database for synced puts. */
export class SyncedPuts {
  private readonly db: ClassicLevel<string, string>;
  private i = 0;

  constructor(dir: string) {
    this.db = new ClassicLevel<string, string>(path.join(dir, "level-put"));
  }

  open(): Promise<void> {
    return this.db.open();
  }

  /** `n` synced puts of `bytes`-byte values; durations in µs. */
  async samples(n: number, bytes = 1024): Promise<number[]> {
    const value = "x".repeat(bytes);
    const out: number[] = [];
    for (let k = 0; k < n; k++) {
      const t0 = nowUs();
      await this.db.put(`key-${String(this.i++).padStart(10, "0")}`, value, { sync: true });
      out.push(nowUs() - t0);
    }
    return out;
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
