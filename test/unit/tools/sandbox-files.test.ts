import { readdir, readFile, symlink, truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  editTool,
  globTool,
  grepTool,
  readTool,
  writeTool,
  type Tool,
} from "../../../src/tools/index.js";
import { READ_MAX_SCAN_BYTES } from "../../../src/tools/read.js";
import { sandbox, toolContext } from "./tool-context.js";

let box: Awaited<ReturnType<typeof sandbox>>;
beforeEach(async () => {
  box = await sandbox();
  await writeFile(path.join(box.outside, "secret.txt"), "TOP SECRET\n");
  await symlink(path.join(box.outside, "secret.txt"), path.join(box.work, "link.txt"));
  await symlink(box.outside, path.join(box.work, "outdir"));
});
afterEach(async () => {
  await box.cleanup();
});

/** Paths that lead out of the working directory, each a different way. */
function escapes(): Record<string, string> {
  return {
    "absolute path outside": path.join(box.outside, "secret.txt"),
    "system file": "/etc/passwd",
    "`..` traversal": "../outside/secret.txt",
    "`..` inside an absolute path": path.join(box.work, "sub/../../outside/secret.txt"),
    "symlink to a file outside": path.join(box.work, "link.txt"),
    "symlink to a directory outside": path.join(box.work, "outdir/secret.txt"),
  };
}

/** One call per file tool, aimed at `target`. */
function calls(target: string): [Tool<never>, unknown][] {
  return [
    [readTool as Tool<never>, { file_path: target }],
    [writeTool as Tool<never>, { file_path: target, content: "overwritten" }],
    [editTool as Tool<never>, { file_path: target, old_string: "TOP", new_string: "NO" }],
    [grepTool as Tool<never>, { pattern: "SECRET", path: target }],
    [globTool as Tool<never>, { pattern: "*", path: path.dirname(target) }],
  ];
}

describe("the file tools' sandbox", () => {
  it("refuses every way out of the working directories with an error naming the path", async () => {
    const ctx = toolContext([box.work]);
    for (const [how, target] of Object.entries(escapes())) {
      for (const [tool, input] of calls(target)) {
        if (tool === globTool && path.dirname(target) === box.work) continue; // lists inside
        const result = await tool.run(input as never, ctx);
        expect(result.state, `${tool.name}: ${how}`).toBe("error");
        expect(result.output, `${tool.name}: ${how}`).toMatch(/outside the working directories/);
        expect(result.output).not.toContain("TOP SECRET");
      }
    }
    expect(await readFile(path.join(box.outside, "secret.txt"), "utf8")).toBe("TOP SECRET\n");
    expect(await readdir(box.outside)).toEqual(["secret.txt"]);
  });

  it("does not create files through a dangling symlink pointing out", async () => {
    await symlink(path.join(box.outside, "new.txt"), path.join(box.work, "dangling"));
    const result = await writeTool.run(
      { file_path: path.join(box.work, "dangling"), content: "x" },
      toolContext([box.work]),
    );
    expect(result).toMatchObject({ state: "error" });
    expect(result.output).toMatch(/outside the working directories/);
    expect(await readdir(box.outside)).toEqual(["secret.txt"]);
  });
});

describe("Read on huge and binary files", () => {
  const GiB = 1024 * 1024 * 1024;

  it("pages the start of a 4 GiB sparse file without loading it", async () => {
    const file = path.join(box.work, "huge.log");
    const head = Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    await writeFile(file, head);
    await truncate(file, 4 * GiB);
    const result = await readTool.run({ file_path: file }, toolContext([box.work]));
    expect(result.state).toBe("success");
    expect(result.output).toContain("  2000\tline 2000\n");
    expect(result.output).not.toContain("line 2001");
    expect(result.output).toMatch(/use offset 2001 to read on\)$/);
    expect(result.metadata).toMatchObject({ firstLine: 1, lastLine: 2000, more: true });
  });

  it("stops at its scan bound and says so instead of reading gigabytes", async () => {
    const file = path.join(box.work, "huge.log");
    await writeFile(file, "x".repeat(10_000) + "\nsecond line\n");
    await truncate(file, 4 * GiB); // one 4 GiB line of NULs follows
    const ctx = toolContext([box.work]);
    const past = await readTool.run({ file_path: file, offset: 4 }, ctx);
    expect(past.state).toBe("error");
    expect(past.output).toBe(
      `${file} is ${4 * GiB} bytes; line 4 lies beyond the first ${READ_MAX_SCAN_BYTES} bytes, which is as far as Read looks. Use Grep, or Bash (e.g. tail -c), for such files.`,
    );
    const partial = await readTool.run({ file_path: file, offset: 2 }, ctx);
    expect(partial.state).toBe("success");
    expect(partial.output).toMatch(/^ {5}2\tsecond line\n/);
    expect(partial.output).toContain(`Read stopped at byte ${READ_MAX_SCAN_BYTES} of ${4 * GiB}`);
    expect(partial.metadata).toMatchObject({ scanStopped: true, more: true });
  });

  it("answers a binary file with its size instead of its bytes", async () => {
    const file = path.join(box.work, "blob.bin");
    await writeFile(file, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0xff, 0xfe]));
    const result = await readTool.run({ file_path: file }, toolContext([box.work]));
    expect(result).toEqual({
      state: "error",
      output: `${file} appears to be a binary file (9 bytes, with NUL bytes near the start); Read shows text files only.`,
    });
    const sparse = path.join(box.work, "zeros.img");
    await writeFile(sparse, "");
    await truncate(sparse, 2 * GiB);
    const zeros = await readTool.run({ file_path: sparse }, toolContext([box.work]));
    expect(zeros.output).toMatch(/appears to be a binary file \(2147483648 bytes/);
  });
});
