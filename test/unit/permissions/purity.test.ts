import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const dir = join(import.meta.dirname, "../../../src/permissions");
const files = readdirSync(dir).filter((name) => name.endsWith(".ts"));

describe("src/permissions is pure", () => {
  it.each(files)("%s imports only zod, node:path, picomatch and its own files", (name) => {
    const source = readFileSync(join(dir, name), "utf8");
    const imports = [...source.matchAll(/from "([^"]+)"/g)].map((match) => match[1]);
    for (const specifier of imports) {
      expect(specifier).toMatch(/^(\.\/[a-z-]+\.js|zod|node:path|picomatch\/posix\.js)$/);
    }
    expect(source).not.toMatch(/\bprocess\.|\bDate\b|Math\.random|\bfetch\(|require\(/);
    expect(source).not.toMatch(/\bpath\.(resolve|relative)\(/);
  });
});
