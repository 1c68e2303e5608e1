import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isInside, resolveInside } from "../../../src/tools/index.js";
import { sandbox } from "./tool-context.js";

let box: Awaited<ReturnType<typeof sandbox>>;
beforeEach(async () => {
  box = await sandbox();
});
afterEach(async () => {
  await box.cleanup();
});

describe("isInside", () => {
  it("accepts the directory itself and paths below it, not siblings or prefixes", () => {
    expect(isInside("/a/b", ["/a/b"])).toBe(true);
    expect(isInside("/a/b/c/d", ["/a/b"])).toBe(true);
    expect(isInside("/a/b/..c", ["/a/b"])).toBe(true);
    expect(isInside("/a/bc", ["/a/b"])).toBe(false);
    expect(isInside("/a", ["/a/b"])).toBe(false);
    expect(isInside("/x/y", ["/a/b", "/x"])).toBe(true);
  });
});

describe("resolveInside", () => {
  it("resolves a relative path against the first working directory", async () => {
    await writeFile(path.join(box.work, "a.txt"), "a");
    const r = await resolveInside("a.txt", [box.work]);
    expect(r).toEqual({
      ok: true,
      requested: path.join(box.work, "a.txt"),
      path: path.join(box.work, "a.txt"),
      exists: true,
    });
  });

  it("accepts a file to be created under missing directories", async () => {
    const r = await resolveInside(path.join(box.work, "x/y/z.txt"), [box.work]);
    expect(r).toMatchObject({ ok: true, path: path.join(box.work, "x/y/z.txt"), exists: false });
  });

  it("refuses an absolute path outside and a `..` escape", async () => {
    const abs = await resolveInside(path.join(box.outside, "f"), [box.work]);
    expect(abs.ok).toBe(false);
    if (!abs.ok) expect(abs.error).toMatch(/is outside the working directories: .*work/);
    const up = await resolveInside(path.join(box.work, "../outside/f"), [box.work]);
    expect(up.ok).toBe(false);
    const rel = await resolveInside("../outside/f", [box.work]);
    expect(rel.ok).toBe(false);
    expect(await resolveInside("/", [box.work])).toMatchObject({ ok: false });
  });

  it("accepts a path inside any of several working directories", async () => {
    const r = await resolveInside(path.join(box.outside, "f"), [box.work, box.outside]);
    expect(r.ok).toBe(true);
  });

  it("refuses symlinks pointing out, also when the target or the file is missing", async () => {
    await writeFile(path.join(box.outside, "secret"), "s");
    await symlink(path.join(box.outside, "secret"), path.join(box.work, "link"));
    await symlink(box.outside, path.join(box.work, "dirlink"));
    await symlink(path.join(box.outside, "nope/deeper"), path.join(box.work, "dangling"));
    for (const p of ["link", "dirlink/secret", "dirlink/new.txt", "dangling", "dangling/x"]) {
      const r = await resolveInside(path.join(box.work, p), [box.work]);
      expect(r.ok, p).toBe(false);
      if (!r.ok) expect(r.error).toMatch(/resolves to .*outside.*, which is outside the working/);
    }
  });

  it("accepts symlinks that stay inside and returns the real path", async () => {
    await mkdir(path.join(box.work, "real"));
    await writeFile(path.join(box.work, "real/f.txt"), "f");
    await symlink("real", path.join(box.work, "alias"));
    await symlink("real/missing.txt", path.join(box.work, "dangling-inside"));
    const r = await resolveInside(path.join(box.work, "alias/f.txt"), [box.work]);
    expect(r).toMatchObject({ ok: true, path: path.join(box.work, "real/f.txt"), exists: true });
    const d = await resolveInside(path.join(box.work, "dangling-inside"), [box.work]);
    expect(d).toMatchObject({ ok: true, path: path.join(box.work, "real/missing.txt") });
  });

  it("accepts symlinked working directories by their real path", async () => {
    const alias = path.join(box.root, "work-alias");
    await symlink(box.work, alias);
    const r = await resolveInside(path.join(box.work, "f"), [alias]);
    expect(r.ok).toBe(true);
  });

  it("refuses symlink loops and paths through a file", async () => {
    await symlink("loop2", path.join(box.work, "loop1"));
    await symlink("loop1", path.join(box.work, "loop2"));
    expect(await resolveInside(path.join(box.work, "loop1"), [box.work])).toMatchObject({
      ok: false,
      error: expect.stringMatching(/too many symbolic links/) as unknown,
    });
    await writeFile(path.join(box.work, "file"), "x");
    expect(await resolveInside(path.join(box.work, "file/child"), [box.work])).toMatchObject({
      ok: false,
    });
  });

  it("fails clearly without working directories", async () => {
    expect(await resolveInside("/tmp", [])).toMatchObject({ ok: false });
  });
});
