import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listDirectoryOf, realPathOf } from "../../../src/agent/real-path.js";
import type { PermissionRequest } from "../../../src/permissions/index.js";
import { expandGlob } from "../../../src/permissions/expand-glob.js";
import { expectNotReadOnly, expectReadOnly } from "./modes.js";

/**
 * What the check sees on disk, with the probes the server uses: what wildcards match (and where
 * the links among the matches lead), what diff compares in a directory, and where a git
 * repository's top is. The tree, made afresh in a temporary directory:
 *
 *   out/secret.txt, out/dir/x.txt                       outside the working directory
 *   outer/.git/, outer/wd2/a.txt                        a repository above a working directory
 *   wd/a.txt, wd/b.txt, wd/sub/c.txt, wd/.hidden
 *   wd/link -> ../out/secret.txt, wd/dirlink -> ../out/dir
 *   wd/d1/leak -> ../../out/secret.txt, wd/d2/leak       a file and a link of the same name
 *   wd/repo/.git/, wd/repo/src/m.ts                     a repository inside
 */
let root: string;
let wd: string;
const at = (workingDirectory: string): Partial<PermissionRequest> => ({
  workingDirectories: [workingDirectory],
  realPath: realPathOf,
  listDirectory: listDirectoryOf,
});

beforeAll(() => {
  root = realPathOf(mkdtempSync(path.join(tmpdir(), "parkway-on-disk-")));
  wd = path.join(root, "wd");
  const files: Record<string, string> = {
    "out/secret.txt": "secret",
    "out/dir/x.txt": "x",
    "outer/wd2/a.txt": "a",
    "wd/a.txt": "a",
    "wd/b.txt": "b",
    "wd/sub/c.txt": "c",
    "wd/.hidden": "h",
    "wd/d2/leak": "plain",
    "wd/repo/src/m.ts": "m",
  };
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), content);
  }
  mkdirSync(path.join(root, "outer/.git"));
  mkdirSync(path.join(root, "wd/repo/.git"));
  mkdirSync(path.join(wd, "d1"));
  symlinkSync("../out/secret.txt", path.join(wd, "link"));
  symlinkSync("../out/dir", path.join(wd, "dirlink"));
  symlinkSync("../../out/secret.txt", path.join(wd, "d1/leak"));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("wildcards: each match is judged where it leads", () => {
  it.each([
    "cat lin*",
    "cat l?nk",
    "cat [l]ink",
    "grep x *",
    "wc -c *",
    "cat */leak",
    "ls dirl*/",
    "cat */../secret.txt",
  ])("%s matches a link that leads outside: not read-only", (command) =>
    expectNotReadOnly(command, at(wd)),
  );

  it.each(["cd dirl* && cat x.txt", "cd d? && cat ../link"])(
    "%s: cd follows its single match",
    (command) => expectNotReadOnly(command, at(wd)),
  );

  it.each([
    "cat *.txt",
    "wc -l sub/*",
    "cat [ab].txt",
    "ls .h*",
    "cat nothing*",
    "cd s* && cat c.txt",
  ])("%s matches only what stays inside: read-only", (command) => expectReadOnly(command, at(wd)));

  it("expands as bash does: one segment at a time, dot files only by a leading dot", () => {
    const list = listDirectoryOf;
    const names = (pattern: string) =>
      expandGlob(path.join(wd, pattern), list, 100)?.map((p) => path.relative(wd, p));
    expect(names("*.txt")?.sort()).toEqual(["a.txt", "b.txt"]);
    expect(names("*")).not.toContain(".hidden");
    expect(names(".h*")).toEqual([".hidden"]);
    expect(names("[!a].txt")).toEqual(["b.txt"]);
    expect(names("*/c.txt")).toEqual(["sub/c.txt"]);
    expect(names("d[[:digit:]]/leak")?.sort()).toEqual(["d1/leak", "d2/leak"]);
    expect(names("zz*")).toEqual([]);
    expect(expandGlob(path.join(wd, "*"), list, 2)).toBeUndefined();
  });
});

describe("diff compares the files in the directories it is given", () => {
  it("a link among them that leads outside: not read-only", () => {
    expectNotReadOnly("diff d1 d2", at(wd));
    expectNotReadOnly("diff -r --no-dereference sub d1", at(wd));
  });

  it("directories whose files stay inside: read-only", () => {
    expectReadOnly("diff sub d2", at(wd));
    expectReadOnly("diff -r --no-dereference sub d2", at(wd));
  });
});

describe("git works on the repository around the directory it runs in", () => {
  it("a repository whose top is above the working directory: not read-only", () => {
    for (const command of ["git show HEAD:../secret", "git log -p", "git status --short"]) {
      expectNotReadOnly(command, at(path.join(root, "outer/wd2")));
    }
  });

  it("a repository inside: read-only; git --version opens none", () => {
    expectReadOnly("git status --short", at(path.join(wd, "repo")));
    expectReadOnly("git -C repo log --oneline", at(wd));
    expectReadOnly("git --version", at(path.join(root, "outer/wd2")));
  });
});

describe("brace expansion, nested", () => {
  it("{{..,x},y} names .. among its words", () => {
    expectNotReadOnly("cat {{..,x},y}/out/secret.txt", at(wd));
    expectReadOnly("cat {{a,b},sub/c}.txt", at(wd));
  });
});
