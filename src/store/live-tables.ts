import { readFile } from "node:fs/promises";

/**
 * Reads the tables a LevelDB MANIFEST lists as live, with their sizes: the MANIFEST is a log (32 KiB
 * blocks of records with a 7-byte header) of version edits, each a series of tagged fields. Only
 * new and deleted files are kept; record checksums are not verified (LevelDB does that when it
 * opens). A record cut short at the end is ignored, as LevelDB does (a crash while writing it).
 * Returns undefined when the MANIFEST cannot be parsed.
 */
export async function liveTables(manifestPath: string): Promise<Map<number, number> | undefined> {
  const data = await readFile(manifestPath);
  const records = logRecords(data);
  if (!records) return undefined;
  const live = new Map<number, number>();
  for (const record of records) {
    if (!applyEdit(record, live)) return undefined;
  }
  return live;
}

const BLOCK = 32768;
const HEADER = 7;
const FULL = 1;
const FIRST = 2;
const MIDDLE = 3;
const LAST = 4;

/** The whole records of a LevelDB log file, or undefined when its framing is broken. */
function logRecords(data: Buffer): Buffer[] | undefined {
  const records: Buffer[] = [];
  let pending: Buffer[] | undefined;
  let offset = 0;
  while (offset < data.length) {
    const left = BLOCK - (offset % BLOCK);
    if (left < HEADER) {
      offset += left; // the block's trailer
      continue;
    }
    if (offset + HEADER > data.length) break; // cut short at the end
    const length = data.readUInt16LE(offset + 4);
    const type = data[offset + 6]!;
    const start = offset + HEADER;
    if (start + length > data.length) break; // cut short at the end
    if (HEADER + length > left) return undefined;
    const fragment = data.subarray(start, start + length);
    offset = start + length;
    if (type === 0 && length === 0) continue; // preallocated space
    if (type === FULL && !pending) records.push(fragment);
    else if (type === FIRST && !pending) pending = [fragment];
    else if (type === MIDDLE && pending) pending.push(fragment);
    else if (type === LAST && pending) {
      pending.push(fragment);
      records.push(Buffer.concat(pending));
      pending = undefined;
    } else return undefined;
  }
  return records;
}

/** Reads varints and length-prefixed slices from a buffer. */
class Reader {
  offset = 0;
  constructor(private readonly buf: Buffer) {}

  get done(): boolean {
    return this.offset >= this.buf.length;
  }

  varint(): number {
    let result = 0;
    let factor = 1;
    for (;;) {
      if (this.offset >= this.buf.length) throw new RangeError("varint past the end");
      const byte = this.buf[this.offset++]!;
      result += (byte & 0x7f) * factor;
      if (byte < 0x80) return result;
      factor *= 128;
    }
  }

  slice(): void {
    const length = this.varint();
    if (this.offset + length > this.buf.length) throw new RangeError("slice past the end");
    this.offset += length;
  }
}

/** Applies one version edit's new and deleted files to `live`; false when it cannot be read. */
function applyEdit(record: Buffer, live: Map<number, number>): boolean {
  const r = new Reader(record);
  try {
    while (!r.done) {
      const tag = r.varint();
      switch (tag) {
        case 1: // comparator name
          r.slice();
          break;
        case 2: // log number
        case 3: // next file number
        case 4: // last sequence
        case 9: // previous log number
          r.varint();
          break;
        case 5: // compact pointer: level, key
          r.varint();
          r.slice();
          break;
        case 6: // deleted file: level, number
          r.varint();
          live.delete(r.varint());
          break;
        case 7: {
          // new file: level, number, size, smallest key, largest key
          r.varint();
          const number = r.varint();
          const size = r.varint();
          r.slice();
          r.slice();
          live.set(number, size);
          break;
        }
        default:
          return false;
      }
    }
  } catch {
    return false;
  }
  return true;
}
