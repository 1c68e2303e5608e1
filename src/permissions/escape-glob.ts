/** Escapes every glob metacharacter of a literal path so picomatch matches it as written. */
export function escapeGlob(path: string): string {
  return path.replace(/[\\*?[\]{}()!+@|]/g, "\\$&");
}
