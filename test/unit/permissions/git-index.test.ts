import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diskProbes, gitlinksOf, realPathOf } from "../../../src/agent/real-path.js";
import { readGitIndex } from "../../../src/permissions/git-index.js";
import type { PermissionRequest } from "../../../src/permissions/index.js";
import { expectNotReadOnly, expectReadOnly } from "./modes.js";

/**
 * `git status` runs git in every submodule the index holds, with that repository's settings, even
 * one `.gitmodules` does not list (an embedded repository added with `git add`). The check reads
 * the index for them: the reader is held against `git ls-files -s` on indexes git wrote in each
 * version and object format.
 */
let root: string;
beforeAll(() => {
  root = realPathOf(mkdtempSync(path.join(tmpdir(), "parkway-git-index-")));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const git = (dir: string, ...args: string[]): string =>
  execFileSync("git", ["-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });

/** A repository with files, an embedded repository and a nested one, all added to its index. */
function repository(name: string, initArgs: string[] = []): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  execFileSync("git", ["init", "-q", ...initArgs, dir]);
  writeFileSync(path.join(dir, "a.txt"), "a\n");
  mkdirSync(path.join(dir, "deep/er/still"), { recursive: true });
  writeFileSync(path.join(dir, "deep/er/still/b.txt"), "b\n");
  for (const inner of ["embedded", "deep/er/nested"]) {
    execFileSync("git", ["init", "-q", ...initArgs, path.join(dir, inner)]);
    git(path.join(dir, inner), "commit", "-q", "--allow-empty", "-m", "x");
  }
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "x");
  return dir;
}

/** The gitlinks `git ls-files -s` lists, as the reader should find them. */
function gitsGitlinks(dir: string): string[] {
  return git(dir, "ls-files", "-s")
    .split("\n")
    .filter((line) => line.startsWith("160000 "))
    .map((line) => line.split("\t")[1]!);
}

describe("the submodules in a git index", () => {
  it.each([
    ["version 2", [], []],
    ["version 3 (an intent-to-add entry has extended flags)", [], ["3"]],
    ["version 4 (paths compressed)", [], ["4"]],
    ["SHA-256 object ids", ["--object-format=sha256"], []],
    ["SHA-256, version 4", ["--object-format=sha256"], ["4"]],
  ])("%s", (name, initArgs, version) => {
    const dir = repository(name.replace(/\W+/g, "-"), initArgs);
    if (version.length > 0) {
      writeFileSync(path.join(dir, "new.txt"), "n\n");
      git(dir, "add", "-N", "new.txt");
      git(dir, "update-index", "--index-version", version[0]!);
    }
    const idBytes = initArgs.length > 0 ? 32 : 20;
    const found = gitlinksOf(path.join(dir, ".git/index"), idBytes);
    expect(found).toEqual(gitsGitlinks(dir));
    expect(found).toEqual(["deep/er/nested", "embedded"]);
  });

  it("a split index: the shared index's entries too", () => {
    const dir = repository("split");
    git(dir, "update-index", "--split-index");
    writeFileSync(path.join(dir, "c.txt"), "c\n");
    git(dir, "add", "c.txt");
    const read = readGitIndex(readFileSync(path.join(dir, ".git/index")), 20);
    expect(read.ok && read.sharedIndex).toMatch(/^[0-9a-f]{40}$/);
    expect(gitlinksOf(path.join(dir, ".git/index"), 20)).toEqual(gitsGitlinks(dir));
  });

  it("refuses what is not an index it can read: another format, a cut, a wrong object id size", () => {
    const dir = repository("damaged");
    const bytes = readFileSync(path.join(dir, ".git/index"));
    expect(readGitIndex(Buffer.from("not an index at all, not one bit"), 20)).toMatchObject({
      ok: false,
      reason: "not a git index",
    });
    expect(readGitIndex(bytes.subarray(0, bytes.length - 100), 20).ok).toBe(false);
    expect(readGitIndex(bytes, 32).ok).toBe(false);
    const file = path.join(root, "bad-index");
    writeFileSync(file, bytes.subarray(0, 60));
    expect(() => gitlinksOf(file, 20)).toThrow(/cannot be read as git's index/);
    expect(gitlinksOf(path.join(root, "no-index-here"), 20)).toBeUndefined();
  });
});

describe("git in a repository whose index holds a submodule .gitmodules does not list", () => {
  const at = (dir: string): Partial<PermissionRequest> => ({
    workingDirectories: [dir],
    ...diskProbes,
  });

  it.each([
    ["version 2", "2"],
    ["version 4", "4"],
  ])("%s: read-only until the embedded repository's settings run a program", (_name, version) => {
    const dir = repository(`verdict-${version}`);
    git(dir, "update-index", "--index-version", version);
    expectReadOnly("git status", at(dir));
    expectReadOnly("git diff", at(dir));
    git(path.join(dir, "deep/er/nested"), "config", "core.fsmonitor", "./watch.sh");
    expectNotReadOnly("git status", at(dir));
    expectNotReadOnly("git diff --stat", at(dir));
    expectReadOnly("git status", at(path.join(dir, "embedded")));
  });

  it("an index the check cannot read makes git ask", () => {
    const dir = repository("verdict-damaged");
    const index = path.join(dir, ".git/index");
    writeFileSync(index, readFileSync(index).subarray(0, 64));
    expectNotReadOnly("git status", at(dir));
  });
});
