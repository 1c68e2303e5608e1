import { mkdir, symlink, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGrepTool, grepTool } from "../../../src/tools/index.js";
import { sandbox, toolContext } from "./tool-context.js";

let box: Awaited<ReturnType<typeof sandbox>>;
let a: string;
let b: string;
let c: string;
beforeEach(async () => {
  box = await sandbox();
  await mkdir(path.join(box.work, "src"));
  a = path.join(box.work, "src/a.ts");
  b = path.join(box.work, "src/b.js");
  c = path.join(box.work, "notes.md");
  await writeFile(a, "import x;\nfunction alpha() {\n  return 1;\n}\nfunction beta() {}\n");
  await writeFile(b, "// TODO\nfunction Gamma() {}\n");
  await writeFile(c, "no code here\r\nFunction words\r\n");
  await utimes(a, 1_700_000_100, 1_700_000_100);
  await utimes(b, 1_700_000_200, 1_700_000_200);
  await utimes(c, 1_700_000_000, 1_700_000_000);
});
afterEach(async () => {
  await box.cleanup();
});

const grep = (input: Record<string, unknown>, maxOutputBytes?: number) =>
  createGrepTool({ batchTimeMs: 300 }).run(
    grepTool.inputSchema.parse(input),
    toolContext([box.work], { maxOutputBytes }),
  );

describe("Grep", () => {
  it("lists matching files by default, most recently modified first", async () => {
    const result = await grep({ pattern: "function" });
    expect(result).toEqual({
      state: "success",
      output: `Found 2 files\n${b}\n${a}`,
      metadata: { files: 2, entries: 2 },
    });
  });

  it("ignores case with -i and filters files with glob", async () => {
    expect((await grep({ pattern: "function", "-i": true })).output).toBe(
      `Found 3 files\n${b}\n${a}\n${c}`,
    );
    expect((await grep({ pattern: "function", glob: "*.ts" })).output).toBe(`Found 1 file\n${a}`);
    expect((await grep({ pattern: "function", glob: "src/*.{js,md}" })).output).toBe(
      `Found 1 file\n${b}`,
    );
  });

  it("shows matching lines with line numbers in content mode", async () => {
    const result = await grep({ pattern: "^function \\w+", output_mode: "content" });
    expect(result.output).toBe(
      [`${a}:2:function alpha() {`, `${a}:5:function beta() {}`, `${b}:2:function Gamma() {}`].join(
        "\n",
      ),
    );
  });

  it("shows context lines with -A, -B and -C, separating groups", async () => {
    const after = await grep({ pattern: "alpha|beta", output_mode: "content", "-A": 1, path: a });
    expect(after.output).toBe(
      [`${a}:2:function alpha() {`, `${a}-3-  return 1;`, "--", `${a}:5:function beta() {}`].join(
        "\n",
      ),
    );
    const around = await grep({ pattern: "return", output_mode: "content", "-C": 1, path: a });
    expect(around.output).toBe(
      [`${a}-2-function alpha() {`, `${a}:3:  return 1;`, `${a}-4-}`].join("\n"),
    );
    const before = await grep({ pattern: "beta", output_mode: "content", "-B": 10, path: a });
    expect(before.output.split("\n")).toHaveLength(5);
  });

  it("counts matching lines per file", async () => {
    const result = await grep({ pattern: "function", output_mode: "count" });
    expect(result.output).toBe(`${a}:2\n${b}:1`);
  });

  it("matches across lines in multiline mode", async () => {
    const single = await grep({ pattern: "alpha\\(\\) \\{\\s+return", output_mode: "content" });
    expect(single.output).toBe("No matches found.");
    const multi = await grep({
      pattern: "alpha.*?return",
      multiline: true,
      output_mode: "content",
    });
    expect(multi.output).toBe(`${a}:2:function alpha() {\n${a}:3:  return 1;`);
  });

  it("stops at head_limit and caps the output", async () => {
    const limited = await grep({ pattern: ".", output_mode: "content", head_limit: 2, path: a });
    expect(limited.output).toBe(
      `${a}:1:import x;\n${a}:2:function alpha() {\n(stopped at head_limit=2 entries)`,
    );
    expect(limited.metadata).toMatchObject({ truncated: true });
    const capped = await grep({ pattern: ".", output_mode: "content" }, 60);
    expect(capped.output).toMatch(/\[output truncated at 60 bytes\]$/);
  });

  it("skips binary files, node_modules and .git", async () => {
    await writeFile(path.join(box.work, "bin.dat"), Buffer.from("function\0\x01"));
    await mkdir(path.join(box.work, "node_modules/p"), { recursive: true });
    await writeFile(path.join(box.work, "node_modules/p/i.js"), "function dep() {}");
    await mkdir(path.join(box.work, ".git"));
    await writeFile(path.join(box.work, ".git/config"), "function");
    expect((await grep({ pattern: "function" })).output).toBe(`Found 2 files\n${b}\n${a}`);
  });

  it("never searches outside the working directories", async () => {
    await writeFile(path.join(box.outside, "secret.txt"), "function secret");
    await symlink(box.outside, path.join(box.work, "outdir"));
    await symlink(path.join(box.outside, "secret.txt"), path.join(box.work, "link.txt"));
    expect((await grep({ pattern: "secret", output_mode: "content" })).output).toBe(
      "No matches found.",
    );
    expect((await grep({ pattern: "secret", glob: "outdir/*" })).output).toBe("No matches found.");
    for (const target of [box.outside, path.join(box.work, "link.txt"), "../outside"]) {
      const result = await grep({ pattern: "secret", path: target, output_mode: "content" });
      expect(result.state, target).toBe("error");
      expect(result.output).not.toContain("function secret");
    }
    expect((await grep({ pattern: "secret", glob: "../outside/*" })).state).toBe("error");
  });

  it("reports an invalid regex and gives up on a catastrophic one", async () => {
    expect(await grep({ pattern: "(unclosed" })).toMatchObject({
      state: "error",
      output: expect.stringMatching(/Invalid regular expression/) as unknown,
    });
    await writeFile(path.join(box.work, "evil.txt"), `${"a".repeat(40)}!\n`);
    const evil = await grep({ pattern: "^(a+)+$", path: path.join(box.work, "evil.txt") });
    expect(evil).toMatchObject({
      state: "error",
      output: expect.stringMatching(/backtracks catastrophically/) as unknown,
    });
  });

  it("is read-only and concurrency-safe, with a strict schema", () => {
    const s = grepTool.inputSchema;
    const parsed = s.parse({ pattern: "x" });
    expect(parsed.output_mode).toBe("files_with_matches");
    expect(grepTool.isReadOnly(parsed)).toBe(true);
    expect(grepTool.isConcurrencySafe(parsed)).toBe(true);
    expect(
      s.safeParse({ pattern: "x", "-A": 2, "-B": 1, "-C": 0, "-i": true, head_limit: 5 }).success,
    ).toBe(true);
    expect(s.safeParse({ pattern: "x", "-n": true }).success).toBe(false);
    expect(s.safeParse({ output_mode: "count" }).success).toBe(false);
    expect(s.safeParse({ pattern: "x", output_mode: "lines" }).success).toBe(false);
    expect(s.safeParse({ pattern: "x", "-A": -1 }).success).toBe(false);
  });
});
