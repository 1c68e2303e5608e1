import { mkdir, readFile, readdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeTool } from "../../../src/tools/index.js";
import { sandbox, toolContext } from "./tool-context.js";

let box: Awaited<ReturnType<typeof sandbox>>;
beforeEach(async () => {
  box = await sandbox();
});
afterEach(async () => {
  await box.cleanup();
});

describe("Write", () => {
  it("creates a file with its missing parent directories", async () => {
    const file = path.join(box.work, "a/b/c.txt");
    const result = await writeTool.run(
      { file_path: file, content: "héllo\n" },
      toolContext([box.work]),
    );
    expect(result).toEqual({
      state: "success",
      output: `Created ${file} (7 bytes).`,
      metadata: { path: file, bytes: 7, created: true },
    });
    expect(await readFile(file, "utf8")).toBe("héllo\n");
  });

  it("replaces the content of an existing file", async () => {
    const file = path.join(box.work, "f.txt");
    await writeFile(file, "a much longer old content\n");
    const result = await writeTool.run(
      { file_path: "f.txt", content: "new" },
      toolContext([box.work]),
    );
    expect(result.output).toBe(`Wrote ${file} (3 bytes).`);
    expect(await readFile(file, "utf8")).toBe("new");
  });

  it("writes through a symlink that stays inside", async () => {
    await mkdir(path.join(box.work, "real"));
    await symlink("real", path.join(box.work, "alias"));
    const result = await writeTool.run(
      { file_path: path.join(box.work, "alias/f.txt"), content: "x" },
      toolContext([box.work]),
    );
    expect(result.state).toBe("success");
    expect(await readFile(path.join(box.work, "real/f.txt"), "utf8")).toBe("x");
  });

  it("refuses to write outside: absolute, `..`, symlinked file, symlinked dir", async () => {
    const existing = path.join(box.outside, "existing.txt");
    await writeFile(existing, "original");
    await symlink(existing, path.join(box.work, "link.txt"));
    await symlink(box.outside, path.join(box.work, "outdir"));
    await symlink(path.join(box.outside, "ghost.txt"), path.join(box.work, "dangling.txt"));
    const ctx = toolContext([box.work]);
    for (const file_path of [
      existing,
      path.join(box.outside, "new.txt"),
      path.join(box.work, "../outside/new.txt"),
      path.join(box.work, "link.txt"),
      path.join(box.work, "outdir/new.txt"),
      path.join(box.work, "outdir/sub/new.txt"),
      path.join(box.work, "outdir/existing.txt"),
      path.join(box.work, "dangling.txt"),
    ]) {
      const result = await writeTool.run({ file_path, content: "PWNED" }, ctx);
      expect(result.state, file_path).toBe("error");
      expect(result.output).toMatch(/outside the working directories/);
    }
    expect(await readFile(existing, "utf8")).toBe("original");
    expect(await readdir(box.outside)).toEqual(["existing.txt"]);
  });

  it("refuses a directory and a path under a file", async () => {
    const ctx = toolContext([box.work]);
    await mkdir(path.join(box.work, "d"));
    expect(
      await writeTool.run({ file_path: path.join(box.work, "d"), content: "" }, ctx),
    ).toMatchObject({
      state: "error",
      output: expect.stringMatching(/is a directory/) as unknown,
    });
    await writeFile(path.join(box.work, "f"), "f");
    for (const below of ["f/g.txt", "f/x/y/g.txt"]) {
      const under = await writeTool.run(
        { file_path: path.join(box.work, below), content: "" },
        ctx,
      );
      expect(under, below).toMatchObject({
        state: "error",
        output: `${path.join(box.work, below)}: a parent of this path is not a directory.`,
      });
    }
    expect(await readFile(path.join(box.work, "f"), "utf8")).toBe("f");
  });

  it("is neither read-only nor concurrency-safe, with a strict schema", () => {
    const input = { file_path: "/a", content: "" };
    expect(writeTool.isReadOnly(input)).toBe(false);
    expect(writeTool.isConcurrencySafe(input)).toBe(false);
    const s = writeTool.inputSchema;
    expect(s.safeParse(input).success).toBe(true);
    expect(s.safeParse({ ...input, mode: 0o777 }).success).toBe(false);
    expect(s.safeParse({ file_path: "/a" }).success).toBe(false);
    expect(s.safeParse({ file_path: "/a", content: 1 }).success).toBe(false);
  });
});
