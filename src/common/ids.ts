import { randomBytes } from "node:crypto";

let last = 0;
let counter = 0;

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
  const rand = randomBytes(8)
    .toString("base64url")
    .slice(0, 10)
    .toLowerCase()
    .replace(/[-_]/g, "0");
  return `${prefix}_${time}${seq}${rand}`;
}
