import { randomFillSync } from "node:crypto";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";
const RANDOM_CHARS = 10;
const POOL_BYTES = 4096;

let last = 0;
let counter = 0;
// Random bytes are drawn from the system in blocks of POOL_BYTES, not one call per id.
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

function randomChars(): string {
  let out = "";
  while (out.length < RANDOM_CHARS) {
    if (offset === POOL_BYTES) {
      randomFillSync(pool);
      offset = 0;
    }
    const byte = pool[offset]!;
    offset += 1;
    // 252 = 7 × 36: bytes above it are skipped so every character is equally likely.
    if (byte < 252) out += ALPHABET[byte % 36];
  }
  return out;
}

/**
 * A unique id that sorts by creation time: `prefix_` + 9 base36 characters of milliseconds, 3 of a
 * per-millisecond counter, 10 random. Ids created later in the same process sort after earlier ones.
 */
export function newId(prefix: string): string {
  const now = Date.now();
  if (now === last) counter += 1;
  else {
    last = now;
    counter = 0;
  }
  const time = now.toString(36).padStart(9, "0");
  const seq = counter.toString(36).padStart(3, "0");
  return `${prefix}_${time}${seq}${randomChars()}`;
}
