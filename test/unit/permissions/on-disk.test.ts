import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hardLinkedOf, listDirectoryOf, realPathOf } from "../../../src/agent/real-path.js";
import type { PermissionRequest } from "../../../src/permissions/index.js";
import { expandGlob } from "../../../src/permissions/expand-glob.js";
import { bash, decide } from "./helpers.js";
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
 *   wd/g/1, wd/g/zlink -> ../../out/secret.txt          a wildcard's matches in a non-file place
 *   wd/dl -> ../out/created                             a dangling link that leads out
 *   wd/into/a.txt -> ../../out/secret.txt               where `cp a.txt into` lands
 *   wd/dst/d2/leak -> ../../../out/secret.txt           a tree `cp -r d2 dst` writes into
 *   wd/many/0 … wd/many/899                             a large directory
 *   wd/deep/b/, wd/l2 -> deep/b                         a link `cd` takes logically
 *   wd/n<0xff> -> ../out/secret.txt                     a name that is not UTF-8
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
  const repository = (dir: string) => {
    for (const name of ["objects", "refs"]) mkdirSync(path.join(dir, name), { recursive: true });
    writeFileSync(path.join(dir, "HEAD"), "ref: refs/heads/main\n");
  };
  repository(path.join(root, "outer/.git"));
  mkdirSync(path.join(root, "outer/wd2/empty/.git"), { recursive: true });
  repository(path.join(wd, "bareish"));
  mkdirSync(path.join(wd, "worktree"));
  writeFileSync(path.join(wd, "worktree/.git"), "gitdir: /elsewhere/.git\n");
  mkdirSync(path.join(wd, "g"), { recursive: true });
  writeFileSync(path.join(wd, "g/1"), "1");
  symlinkSync("../../out/secret.txt", path.join(wd, "g/zlink"));
  symlinkSync("../out/created", path.join(wd, "dl"));
  mkdirSync(path.join(wd, "into"));
  symlinkSync("../../out/secret.txt", path.join(wd, "into/a.txt"));
  mkdirSync(path.join(wd, "dst/d2"), { recursive: true });
  symlinkSync("../../../out/secret.txt", path.join(wd, "dst/d2/leak"));
  mkdirSync(path.join(wd, "many"));
  for (let k = 0; k < 900; k += 1) writeFileSync(path.join(wd, "many", String(k)), "");
  mkdirSync(path.join(wd, "deep/b"), { recursive: true });
  symlinkSync("deep/b", path.join(wd, "l2"));
  repository(path.join(root, "wd/repo/.git"));
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

  it.each([
    "echo ../out/*",
    "printf '%s\\n' ../out/*",
    "echo ../out/nothing*",
    "echo ../o?t/secret.txt",
    "echo ../*/dir",
    "echo dirlink/*",
    "true ../out/*",
  ])(
    "%s: its wildcards list a directory outside, whatever the program does: not read-only",
    (command) => expectNotReadOnly(command, at(wd)),
  );

  it.each(["echo *", "echo sub/*", "echo nothing*", "printf '%s\\n' *.txt"])(
    "%s: its wildcards list directories inside: read-only",
    (command) => expectReadOnly(command, at(wd)),
  );

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

describe("test looks up the files its file tests name", () => {
  it.each([
    "test -e ../out/secret.txt",
    "[ -f ../out/secret.txt ]",
    "test ! -d ../out/dir",
    "[ -f a.txt -a -d ../out ]",
    "test -a ../out/secret.txt",
    "test a.txt -nt ../out/secret.txt",
    "[ ../out/secret.txt -ef link ]",
    "test -f link",
  ])("%s: not read-only", (command) => expectNotReadOnly(command, at(wd)));

  it.each([
    "test -e a.txt",
    "[ -d sub ] && ls sub",
    "test -n ../out/secret.txt",
    "[ ../out/secret.txt = x ]",
    "test -t 1",
    "test -z x -a -n y",
  ])("%s: read-only", (command) => expectReadOnly(command, at(wd)));
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

  it("what git would take as a repository, and where the check cannot follow it: not read-only", () => {
    // An empty .git is passed over, as git passes over it: the repository above is outer's.
    expectNotReadOnly("git log -p", at(path.join(root, "outer/wd2/empty")));
    expectNotReadOnly("git -C bareish status", at(wd));
    expectNotReadOnly("cd bareish && git status", at(wd));
    expectNotReadOnly("git -C worktree show HEAD:x", at(wd));
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

describe("words are expanded as bash expands them before options are read", () => {
  it.each([
    "head -n {1,../out/secret.txt}",
    "grep -v {x,../out/secret.txt}",
    "nl -s {x,../out/secret.txt}",
    "grep -v g/*",
    "nl -s g/*",
    "grep -v -e g/*",
  ])("%s hands the program a file outside: not read-only", (command) =>
    expectNotReadOnly(command, at(wd)),
  );

  it.each(["grep -e '{x,y}' a.txt", "grep 'g/*' a.txt", "ls g/1*", "wc -l {a,b}.txt"])(
    "%s: quoted braces and wildcards stay words; matches inside: read-only",
    (command) => expectReadOnly(command, at(wd)),
  );

  it.each(["cat 'a'{x,y}", 'cat "g"/*', "cat {1..3}"])(
    "%s mixes quoting with expansion, or holds a sequence: not followed",
    (command) => expectNotReadOnly(command, at(wd)),
  );
});

describe("options read as the program reads them", () => {
  it.each([
    "column -d ../out/secret.txt",
    "od -c -w ../out/secret.txt",
    "date -I 010101012000",
    "strings -n @../out/secret.txt a.txt",
    "strings -s @../out/secret.txt a.txt",
  ])("%s: not read-only", (command) => expectNotReadOnly(command, at(wd)));
});

describe("accept_edits: edits judged where they land", () => {
  const edits = (command: string) => decide("Bash", bash(command), "accept_edits", [], at(wd));
  it.each([
    "cp a.txt li*",
    "touch li?k",
    "sed -i s/a/b/ li*",
    "touch dl",
    "echo x > dl",
    "cp a.txt into",
    "cp -t into a.txt",
    "cp -r d2 dst",
    "sed -i'../out/*' s/a/b/ a.txt",
    "sed --in-place=bak/* s/a/b/ a.txt",
    "mv b.txt c.txt; cp a.txt c.txt",
    "cp -P link copy && cat copy",
  ])("%s asks", (command) => {
    expect(edits(command)).toMatchObject({ behavior: "ask" });
  });

  it.each([
    "cp -r sub fresh-copy",
    "cp -r d2 repo",
    "cp a.txt b.txt",
    "mkdir -p new && cp a.txt new/ && ls new",
    "sed -i.bak s/a/b/ a.txt",
    "touch *.txt",
  ])("%s edits inside: allowed", (command) => {
    expect(edits(command)).toMatchObject({ behavior: "allow", check: "working_directory.edit" });
  });
});

describe("a line's decision has a bound on the file system probes it makes", () => {
  it("wildcards over a large directory, many times over, ask once the bound is spent", () => {
    const line = `cat ${Array.from({ length: 40 }, () => "many/*").join(" ")}`;
    const decision = decide("Bash", bash(line), "default", [], at(wd));
    expect(decision.behavior).toBe("ask");
    expect(decision.reason).toMatch(/more paths than the check follows/);
  });
});

describe("cd takes .. logically, as bash does without -P", () => {
  it.each([
    "cd l2/../.. && cat out/secret.txt",
    "cd l2 && cd ../.. && cat out/secret.txt",
    "pushd l2/../.. && cat out/secret.txt",
  ])("%s leaves the working directory: not read-only", (command) =>
    expectNotReadOnly(command, at(wd)),
  );

  it.each(["cd l2/.. && cat a.txt", "cd -P l2/.. && cat ../a.txt", "cd l2 && cd .. && cat a.txt"])(
    "%s stays inside: read-only",
    (command) => expectReadOnly(command, at(wd)),
  );
});

describe("third look", () => {
  it("a name that is not UTF-8 among a wildcard's matches: not read-only", () => {
    const name = Buffer.concat([Buffer.from(`${wd}/n`), Buffer.from([0xff])]);
    symlinkSync("../out/secret.txt", name);
    try {
      expectNotReadOnly("cat n*", at(wd));
      expect(decide("Bash", bash("touch n*"), "accept_edits", [], at(wd)).behavior).toBe("ask");
    } finally {
      rmSync(name);
    }
  });

  it("grep -d recurse walks the directory it runs in", () => {
    expectNotReadOnly("cd ../out && grep -d recurse secret", at(wd));
    expectNotReadOnly("grep --directories=rec secret", at(wd));
    expectReadOnly("grep -d skip a a.txt", at(wd));
  });

  it("collating symbols and equivalence classes in brackets match", () => {
    expectNotReadOnly("cat lin[[.k.]]", at(wd));
    expectNotReadOnly("cat lin[[=k=]]", at(wd));
  });

  it("a recursive copy carries links as links: another command after it asks", () => {
    const edits = (command: string) => decide("Bash", bash(command), "accept_edits", [], at(wd));
    expect(edits("cp -r d1 x && cat x/leak").behavior).toBe("ask");
    expect(edits("cp -r d1 x")).toMatchObject({ behavior: "allow" });
  });
});

describe("fifth look", () => {
  it("rmdir -p removes the parents it names: an absolute path's reach the working directory", () => {
    const edits = (command: string) => decide("Bash", bash(command), "accept_edits", [], at(wd));
    expect(edits(`rmdir -p ${wd}/deep/b`).behavior).toBe("ask");
    expect(edits("rmdir -p deep/b")).toMatchObject({ behavior: "allow" });
  });

  it("/proc/self leads into bash, not into the server: taken as written", () => {
    // The server's own /proc/self/cwd, as if it ran in the working directory.
    const serverInWd = {
      ...at(wd),
      realPath: (p: string) => realPathOf(p.replace(/^\/proc\/self\/cwd/, wd)),
    };
    const command = "cd d1 && cat /proc/self/cwd/leak";
    const decision = decide("Bash", bash(command), "default", [], serverInWd);
    expect(decision.behavior).toBe("ask");
    expect(decision.check).not.toBe("read_only");
  });

  it("a deny rule with several ** against a path with many ** is decided at once", () => {
    const rules = [
      { toolName: "Read", ruleContent: "./**/a/**/b/**/c/**/key", behavior: "deny" as const },
    ];
    const deep = `cat nodir/${"**/".repeat(60)}x`;
    expect(decide("Bash", bash(deep), "default", rules, at(wd)).behavior).toBe("allow");
    expect(decide("Bash", bash(`cat x/**/a/b/c/key`), "default", rules, at(wd)).behavior).toBe(
      "deny",
    );
  });
});

describe("a Read rule reaches what a command sees and what git reaches its own way", () => {
  // In wd/repo (a repository) the rule covers src/, which holds m.ts.
  const rules = [{ toolName: "Read", ruleContent: "./src/**", behavior: "deny" as const }];
  const repo = () => at(path.join(wd, "repo"));
  const decision = (command: string) => decide("Bash", bash(command), "default", rules, repo());

  it.each([
    "echo src/*",
    "printf '%s\\n' */m.ts",
    "git grep KEY HEAD",
    "git grep KEY nothing-here",
    "git grep KEY -- '*m.ts'",
    "git grep KEY -- 'src/m?ts'",
    "git ls-files ':(top)'",
    "git grep --no-index KEY ':!x'",
    "git diff",
    "git show",
    "cd docs && git show HEAD",
    "git log -p",
    "git cat-file -p 0123abcd",
  ])("%s is denied", (command) => {
    expect(decision(command)).toMatchObject({ behavior: "deny", check: "rule.deny" });
  });

  it.each([
    "echo *",
    "ls",
    "git grep KEY docs",
    "git ls-files docs/r.md",
    "git log --oneline",
    "git log --oneline main",
    "cd docs && git log -p -3 .",
    "git log -p -- docs",
    "git diff -- docs",
    "cd docs && git diff .",
    "git show HEAD:docs/r.md",
  ])("%s shows nothing the rule covers: read-only", (command) => {
    mkdirSync(path.join(wd, "repo/docs"), { recursive: true });
    writeFileSync(path.join(wd, "repo/docs/r.md"), "r");
    expect(decision(command)).toMatchObject({ behavior: "allow", check: "read_only" });
  });
});

describe("a file with other hard links may be a file outside", () => {
  const withLinks = (): Partial<PermissionRequest> => ({ ...at(wd), hardLinked: hardLinkedOf });

  it("named, matched by a wildcard or redirected: not read-only", () => {
    mkdirSync(path.join(wd, "hard"), { recursive: true });
    linkSync(path.join(root, "out/secret.txt"), path.join(wd, "hard/linked.txt"));
    for (const command of [
      "cat hard/linked.txt",
      "head -n1 hard/*.txt",
      "grep x hard/linked.txt",
      "wc < hard/linked.txt",
    ]) {
      expectNotReadOnly(command, withLinks());
    }
  });

  it("files with one name, and directories: read-only", () => {
    for (const command of ["cat a.txt b.txt", "ls sub", "grep -r x sub", "cat sub/*"]) {
      expectReadOnly(command, withLinks());
    }
  });
});
