import { mkdir, symlink, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GLOB_MAX_RESULTS } from "../../../src/tools/glob.js";
import { globTool } from "../../../src/tools/index.js";
import { sandbox, toolContext } from "./tool-context.js";

let box: Awaited<ReturnType<typeof sandbox>>;
beforeEach(async () => {
  box = await sandbox();
});
afterEach(async () => {
  await box.cleanup();
});

/** Writes `rel` under the working dir with mtime `secondsAgo` before a fixed instant. */
async function file(rel: string, secondsAgo: number): Promise<string> {
  const abs = path.join(box.work, rel);
  await mkdir(path.dirname(abs), { recursive: true });
  await writeFile(abs, rel);
  const t = 1_700_000_000 - secondsAgo;
  await utimes(abs, t, t);
  return abs;
}

describe("Glob", () => {
  it("lists matching files, most recently modified first", async () => {
    const old = await file("src/old.ts", 300);
    const mid = await file("src/deep/mid.ts", 200);
    const fresh = await file("fresh.ts", 100);
    await file("src/notes.md", 0);
    const result = await globTool.run({ pattern: "**/*.ts" }, toolContext([box.work]));
    expect(result).toEqual({
      state: "success",
      output: [fresh, mid, old].join("\n"),
      metadata: { count: 3 },
    });
  });

  it("refuses a pattern too complex to match quickly, saying why, and still finds long names", async () => {
    const long = await file(`${"a".repeat(200)}b.txt`, 0);
    for (const [pattern, why] of [
      [`${"*a".repeat(6)}*b.txt`, /has 7 wildcards \* in the segment .*; at most 2 in one segment/],
      ["+(a|aa)b.txt", /holds an extglob/],
    ] as const) {
      const result = await globTool.run({ pattern }, toolContext([box.work]));
      expect(result.state).toBe("error");
      expect(result.output).toMatch(why);
    }
    const found = await globTool.run({ pattern: "*a*b.txt" }, toolContext([box.work]));
    expect(found.output).toBe(long);
  });

  it("searches under `path` and includes dot files", async () => {
    const inSrc = await file("src/a.ts", 10);
    const dot = await file("src/.hidden.ts", 5);
    await file("other/b.ts", 0);
    const result = await globTool.run(
      { pattern: "*.ts", path: path.join(box.work, "src") },
      toolContext([box.work]),
    );
    expect(result.output).toBe([dot, inSrc].join("\n"));
  });

  it("skips node_modules and .git unless the pattern names them", async () => {
    const mine = await file("index.js", 0);
    const dep = await file("node_modules/pkg/index.js", 0);
    await file(".git/hooks/pre-commit.js", 0);
    const ctx = toolContext([box.work]);
    expect((await globTool.run({ pattern: "**/*.js" }, ctx)).output).toBe(mine);
    expect((await globTool.run({ pattern: "node_modules/**/*.js" }, ctx)).output).toBe(dep);
  });

  it("says when nothing matches and caps the number of results", async () => {
    const ctx = toolContext([box.work]);
    expect((await globTool.run({ pattern: "*.none" }, ctx)).output).toBe("No files found.");
    for (let i = 0; i < GLOB_MAX_RESULTS + 5; i++) await file(`many/f${i}.txt`, i);
    const result = await globTool.run({ pattern: "many/*.txt" }, ctx);
    expect(result.output.split("\n")).toHaveLength(GLOB_MAX_RESULTS + 1);
    expect(result.output).toMatch(/showing the 100 most recently modified of 105 files/);
    expect(result.metadata).toEqual({ count: 105, truncated: true });
  });

  it("never lists files outside the working directories", async () => {
    await writeFile(path.join(box.outside, "secret.ts"), "s");
    await symlink(box.outside, path.join(box.work, "outdir"));
    await symlink(path.join(box.outside, "secret.ts"), path.join(box.work, "link.ts"));
    const ctx = toolContext([box.work]);
    for (const pattern of ["**/*.ts", "outdir/*", "outdir/**"]) {
      expect((await globTool.run({ pattern }, ctx)).output, pattern).toBe("No files found.");
    }
    for (const pattern of ["../outside/*", `${box.outside}/*`, "{..,x}/outside/*"]) {
      expect((await globTool.run({ pattern }, ctx)).state, pattern).toBe("error");
    }
    expect(await globTool.run({ pattern: "*", path: box.outside }, ctx)).toMatchObject({
      state: "error",
      output: expect.stringMatching(/outside the working directories/) as unknown,
    });
  });

  it("is read-only and concurrency-safe, with a strict schema", () => {
    expect(globTool.isReadOnly({ pattern: "*" })).toBe(true);
    expect(globTool.isConcurrencySafe({ pattern: "*" })).toBe(true);
    const s = globTool.inputSchema;
    expect(s.safeParse({ pattern: "*", path: "/a" }).success).toBe(true);
    expect(s.safeParse({ pattern: "*", cwd: "/a" }).success).toBe(false);
    expect(s.safeParse({ path: "/a" }).success).toBe(false);
    expect(s.safeParse({ pattern: ["*"] }).success).toBe(false);
  });
});
