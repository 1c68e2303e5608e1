/**
 * A random request id (128 bits, hex). Uses crypto.getRandomValues, which browsers offer on plain
 * http origins too, where crypto.randomUUID is missing.
 */
export function newRequestId(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
