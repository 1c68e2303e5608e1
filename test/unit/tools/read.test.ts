import { mkfifo } from "./fifo.js";
import { mkdir, symlink, truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readTool } from "../../../src/tools/index.js";
import { sandbox, toolContext } from "./tool-context.js";

let box: Awaited<ReturnType<typeof sandbox>>;
beforeEach(async () => {
  box = await sandbox();
});
afterEach(async () => {
  await box.cleanup();
});

const lines = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`);
const numbered = (from: number, texts: string[]) =>
  texts.map((t, i) => `${String(from + i).padStart(6)}\t${t}\n`).join("");

describe("Read", () => {
  it("shows a file with line numbers like cat -n", async () => {
    const file = path.join(box.work, "a.txt");
    await writeFile(file, "alpha\r\nbeta\n\ngamma");
    const result = await readTool.run({ file_path: file }, toolContext([box.work]));
    expect(result.state).toBe("success");
    expect(result.output).toBe(numbered(1, ["alpha", "beta", "", "gamma"]));
    expect(result.metadata).toEqual({ firstLine: 1, lastLine: 4, more: false, totalLines: 4 });
  });

  it("reads a window with offset and limit and says where the file continues", async () => {
    const file = path.join(box.work, "many.txt");
    await writeFile(file, lines(1, 50).join("\n") + "\n");
    const result = await readTool.run(
      { file_path: file, offset: 10, limit: 3 },
      toolContext([box.work]),
    );
    expect(result.output).toBe(
      numbered(10, lines(10, 12)) +
        "\n(showing lines 10–12; the file continues: use offset 13 to read on)",
    );
    const tail = await readTool.run({ file_path: file, offset: 49 }, toolContext([box.work]));
    expect(tail.output).toBe(numbered(49, lines(49, 50)));
  });

  it("reads a relative path from the first working directory", async () => {
    await writeFile(path.join(box.work, "r.txt"), "x\n");
    const result = await readTool.run({ file_path: "r.txt" }, toolContext([box.work]));
    expect(result.output).toBe(numbered(1, ["x"]));
  });

  it("reads the start of a huge sparse file without loading it", async () => {
    const file = path.join(box.work, "huge.txt");
    await writeFile(file, lines(1, 2000).join("\n") + "\n"); // text first, then 1 GiB of holes
    await truncate(file, 1024 * 1024 * 1024);
    const result = await readTool.run({ file_path: file, limit: 2 }, toolContext([box.work]));
    expect(result.output).toMatch(/^ {5}1\tline 1\n {5}2\tline 2\n\n\(showing lines 1–2/);
  });

  it("cuts over-long lines and caps the output", async () => {
    const file = path.join(box.work, "wide.txt");
    await writeFile(file, "x".repeat(5000) + "\n" + lines(2, 100).join("\n"));
    const wide = await readTool.run({ file_path: file, limit: 1 }, toolContext([box.work]));
    expect(wide.output).toContain(`${"x".repeat(2000)}… [line truncated]`);
    const capped = await readTool.run(
      { file_path: file, offset: 2 },
      toolContext([box.work], { maxOutputBytes: 100 }),
    );
    expect(capped.output).toMatch(
      /\[output truncated at 100 bytes\]; use offset \d+ to read on\.$/,
    );
    expect(capped.metadata).toMatchObject({ truncated: true, more: true });
  });

  it("refuses binary files, directories, special files, missing files and past-the-end offsets", async () => {
    const bin = path.join(box.work, "a.bin");
    await writeFile(bin, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01]));
    const ctx = toolContext([box.work]);
    expect(await readTool.run({ file_path: bin }, ctx)).toMatchObject({
      state: "error",
      output: expect.stringMatching(/appears to be a binary file/) as unknown,
    });
    await mkdir(path.join(box.work, "dir"));
    expect(await readTool.run({ file_path: path.join(box.work, "dir") }, ctx)).toMatchObject({
      state: "error",
      output: expect.stringMatching(/is a directory/) as unknown,
    });
    const fifo = path.join(box.work, "fifo");
    await mkfifo(fifo);
    expect(await readTool.run({ file_path: fifo }, ctx)).toMatchObject({
      state: "error",
      output: expect.stringMatching(/not a regular file/) as unknown,
    });
    expect(await readTool.run({ file_path: path.join(box.work, "nope") }, ctx)).toMatchObject({
      state: "error",
      output: expect.stringMatching(/does not exist/) as unknown,
    });
    await writeFile(path.join(box.work, "short"), "a\nb\n");
    expect(
      await readTool.run({ file_path: path.join(box.work, "short"), offset: 5 }, ctx),
    ).toMatchObject({
      state: "error",
      output: expect.stringMatching(/has 2 lines; offset 5 is past the end/) as unknown,
    });
  });

  it("says when a file is empty", async () => {
    await writeFile(path.join(box.work, "empty"), "");
    const result = await readTool.run(
      { file_path: path.join(box.work, "empty") },
      toolContext([box.work]),
    );
    expect(result).toMatchObject({
      state: "success",
      output: expect.stringMatching(/is empty/) as unknown,
    });
  });

  it("refuses paths outside the working directories, `..` escapes and symlinks pointing out", async () => {
    const secret = path.join(box.outside, "secret.txt");
    await writeFile(secret, "TOP SECRET\n");
    await symlink(secret, path.join(box.work, "link.txt"));
    await symlink(box.outside, path.join(box.work, "outdir"));
    const ctx = toolContext([box.work]);
    for (const file_path of [
      secret,
      path.join(box.work, "../outside/secret.txt"),
      "../outside/secret.txt",
      path.join(box.work, "link.txt"),
      path.join(box.work, "outdir/secret.txt"),
    ]) {
      const result = await readTool.run({ file_path }, ctx);
      expect(result.state, file_path).toBe("error");
      expect(result.output).toMatch(/outside the working directories/);
      expect(result.output).not.toContain("TOP SECRET");
    }
  });

  it("follows symlinks that stay inside", async () => {
    await writeFile(path.join(box.work, "target.txt"), "inside\n");
    await symlink("target.txt", path.join(box.work, "alias.txt"));
    const result = await readTool.run(
      { file_path: path.join(box.work, "alias.txt") },
      toolContext([box.work]),
    );
    expect(result.output).toBe(numbered(1, ["inside"]));
  });

  it("stops when the signal is aborted", async () => {
    const ctx = toolContext([box.work]);
    ctx.controller.abort();
    await writeFile(path.join(box.work, "a"), "a");
    expect(await readTool.run({ file_path: path.join(box.work, "a") }, ctx)).toMatchObject({
      output: "interrupted",
    });
  });

  it("is read-only and concurrency-safe, with a strict schema", () => {
    const s = readTool.inputSchema;
    expect(readTool.isReadOnly({ file_path: "/a" })).toBe(true);
    expect(readTool.isConcurrencySafe({ file_path: "/a" })).toBe(true);
    expect(s.safeParse({ file_path: "/a", offset: 1, limit: 2000 }).success).toBe(true);
    expect(s.safeParse({ file_path: "/a", extra: 1 }).success).toBe(false);
    expect(s.safeParse({ offset: 1 }).success).toBe(false);
    expect(s.safeParse({ file_path: 5 }).success).toBe(false);
    expect(s.safeParse({ file_path: "/a", offset: 0 }).success).toBe(false);
    expect(s.safeParse({ file_path: "/a", limit: 2001 }).success).toBe(false);
    expect(s.safeParse({ file_path: "/a", limit: 1.5 }).success).toBe(false);
  });
});
