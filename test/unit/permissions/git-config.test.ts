import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listDirectoryOf, readSmallFileOf, realPathOf } from "../../../src/agent/real-path.js";
import { parseGitConfig } from "../../../src/permissions/git-config-syntax.js";
import { settingVerdict } from "../../../src/permissions/git-config.js";
import type { PermissionRequest } from "../../../src/permissions/index.js";
import { expectNotReadOnly, expectReadOnly } from "./modes.js";

/**
 * A repository's own settings can make a git command that only reads run a program
 * (`core.fsmonitor` on `git status`, a diff driver's `textconv` on `git diff`). The check reads
 * them as git does: the parser is held against git's own reading of the same text, and the
 * verdicts against real repositories.
 */
let root: string;
beforeAll(() => {
  root = realPathOf(mkdtempSync(path.join(tmpdir(), "parkway-git-config-")));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The settings' names git reads from `text`, or undefined when git refuses it. */
function gitNames(text: string): string[] | undefined {
  const file = path.join(root, `config-${Math.random().toString(16).slice(2)}`);
  writeFileSync(file, text);
  const listed = spawnSync("git", ["config", "--file", file, "--list", "--name-only"], {
    encoding: "utf8",
  });
  return listed.status === 0 ? listed.stdout.split("\n").filter((line) => line !== "") : undefined;
}

const TEXTS: Record<string, string> = {
  plain: "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
  "a subsection": '[diff "x y"]\n\ttextconv = cat\n',
  "names in capitals (the subsection keeps its case)": '[Diff "X"]\n\tTextConv = cat\n',
  "the old form of a subsection": "[diff.X]\ntextconv=cat\n",
  "a key after the header": "[core] fsmonitor = x\n",
  "a key after a subsection's header": '[diff "x"]textconv=cat\n',
  "a continued value hides what looks like a key": "[core]\n\tpager = a \\\n fsmonitor = b\n",
  "a quoted comment sign": '[a]\nb = "x # y" # c\n; d\n# e\n',
  "a key without a value": "[a]\nb\n",
  "CRLF line ends": "[core]\r\n\tfsmonitor = x\r\n",
  "a byte-order mark": "\uFEFF[core]\nfsmonitor = x\n",
  "an escaped quote in a subsection": '[a "x\\"y"]\nk = 1\n',
  "a tab before the subsection": '[a\t"b"]\nk = 1\n',
  "a dash in a key": "[a]\nfoo-bar = 1\n",
  "escapes in a value": '[a]\nb = "\\t\\n\\\\"\n',
  "several sections and repeats": "[a]\nk=1\n[b]\nk=2\n[a]\nk=3\n",
  "an unterminated quote": '[a]\nb = "x\n',
  "a key before any section": "k = v\n",
  "a space in a header without quotes": "[a b]\nk=1\n",
  "an unknown escape": "[a]\nb = \\q\n",
  "a key starting with a digit": "[a]\n1b = 2\n",
  "a comment right after a key": "[a]\nb # c\n",
};

describe("the check reads git's settings as git does", () => {
  it.each(Object.entries(TEXTS))("%s", (_name, text) => {
    const parsed = parseGitConfig(text);
    const expected = gitNames(text);
    if (expected === undefined) {
      expect(parsed.ok, "git refuses this text, and so does the check").toBe(false);
    } else {
      expect(parsed.ok ? parsed.settings.map((setting) => setting.name) : parsed.reason).toEqual(
        expected,
      );
    }
  });
});

describe("the settings that make git do more than read", () => {
  const verdict = (text: string) => {
    const parsed = parseGitConfig(text);
    if (!parsed.ok) throw new Error(parsed.reason);
    return settingVerdict(parsed.settings);
  };
  it.each([
    ["[core]\nfsmonitor = ./watch.sh\n", "core.fsmonitor"],
    ['[diff "x"]\ntextconv = cat\n', "diff.x.textconv"],
    ['[filter "lfs"]\nclean = git-lfs clean -- %f\n', "filter.lfs.clean"],
    ["[diff]\nexternal = ./d.sh\n", "diff.external"],
    ['[url "ext::sh -c x"]\ninsteadOf = ./y\n', "url.ext::sh -c x.insteadof"],
    ["[include]\npath = ../elsewhere\n", "include.path"],
    ['[includeIf "gitdir:/x/"]\npath = y\n', "includeif.gitdir:/x/.path"],
    ["[pager]\nlog = ./p.sh\n", "pager.log"],
    ["[gpg]\nprogram = ./g.sh\n", "gpg.program"],
    ["[log]\nshowSignature = true\n", "log.showsignature"],
    ["[log]\nshowSignature\n", "log.showsignature"],
    ['[format]\npretty = "%h %G?"\n', "format.pretty"],
    ['[pretty]\nsig = "%h %(signature)"\n', "pretty.sig"],
    ["[extensions]\npartialClone = origin\n", "extensions.partialclone"],
    ['[remote "origin"]\npromisor = true\n', "remote.origin.promisor"],
    ["[core]\nexcludesFile = /etc/passwd\n", "core.excludesfile"],
    ["[core]\nattributesFile = /x\n", "core.attributesfile"],
    ["[diff]\norderFile = /x\n", "diff.orderfile"],
    ["[blame]\nignoreRevsFile = /x\n", "blame.ignorerevsfile"],
    ["[help]\nformat = web\n", "help.format"],
    ["[man]\nviewer = x\n", "man.viewer"],
  ])("%s names %s", (text, name) => {
    expect(verdict(text)).toContain(name);
  });
  it.each([
    "[core]\nrepositoryformatversion = 0\nfilemode = true\nbare = false\nlogallrefupdates = true\n",
    '[remote "origin"]\nurl = git@example.com:a/b.git\nfetch = +refs/heads/*:refs/remotes/origin/*\n',
    '[branch "main"]\nremote = origin\nmerge = refs/heads/main\n[user]\nname = A\n',
    "[core]\nfsmonitor = false\n",
    "[core]\nfsmonitor\n",
    '[diff]\nalgorithm = histogram\n[diff "x"]\nxfuncname = "^sub"\n',
    "[core]\nsshCommand = ssh -i ~/.ssh/work\n[credential]\nhelper = store\n",
    "[log]\nshowSignature = false\n",
    "[log]\nshowSignature =\n",
    '[format]\npretty = "%h %s"\n[pretty]\nshort = "%h %an"\n',
  ])("%s: only reads", (text) => {
    expect(verdict(text)).toBeUndefined();
  });
});

describe("git in a repository whose settings run programs is not read-only", () => {
  const repository = (name: string, settings: [string, string][]): string => {
    const dir = path.join(root, name);
    mkdirSync(dir, { recursive: true });
    execFileSync("git", ["init", "-q", dir]);
    for (const [key, value] of settings) execFileSync("git", ["-C", dir, "config", key, value]);
    return dir;
  };
  const at = (dir: string): Partial<PermissionRequest> => ({
    workingDirectories: [dir],
    realPath: realPathOf,
    listDirectory: listDirectoryOf,
    readSmallFile: readSmallFileOf,
  });

  it("core.fsmonitor: git status, log, help are not read-only; git version is", () => {
    const dir = repository("fsmonitor", [["core.fsmonitor", "touch /tmp/x; false"]]);
    for (const command of ["git status", "git log -p", "git -C . diff", "git help log"]) {
      expectNotReadOnly(command, at(dir));
    }
    expectReadOnly("git version", at(dir));
  });

  it("a repository with plain settings: read-only", () => {
    const dir = repository("plain", [["remote.origin.url", "https://example.com/a.git"]]);
    expectReadOnly("git status", at(dir));
    expectReadOnly("git log -p", at(dir));
  });

  it("from a subdirectory and with -C, the repository found is the one checked", () => {
    const dir = repository("textconv", [["diff.x.textconv", "sh -c id"]]);
    mkdirSync(path.join(dir, "sub"), { recursive: true });
    expectNotReadOnly("git diff", at(path.join(dir, "sub")));
    const plain = repository("plain-outer", []);
    mkdirSync(path.join(plain, "inner"), { recursive: true });
    execFileSync("git", ["init", "-q", path.join(plain, "inner")]);
    execFileSync("git", ["-C", path.join(plain, "inner"), "config", "core.pager", "./p"]);
    expectReadOnly("git status", at(plain));
    expectNotReadOnly("git -C inner status", at(plain));
  });

  it("--git-dir names a repository laid out in the working directory: its settings are read", () => {
    const dir = repository("gitdir", []);
    execFileSync("git", ["init", "-q", "--bare", path.join(dir, "fake")]);
    expectReadOnly("git --git-dir=fake --work-tree=. status", at(dir));
    execFileSync("git", [`--git-dir=${path.join(dir, "fake")}`, "config", "core.fsmonitor", "x"]);
    expectNotReadOnly("git --git-dir=fake --work-tree=. status", at(dir));
  });

  it("a submodule added by git (its core.worktree inside) and hooks from core.hooksPath", () => {
    const lib = repository("lib", []);
    execFileSync("git", [
      "-C",
      lib,
      "-c",
      "user.email=a@b",
      "-c",
      "user.name=a",
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      "x",
    ]);
    const top = repository("with-submodule", []);
    execFileSync("git", [
      "-C",
      top,
      "-c",
      "protocol.file.allow=always",
      "submodule",
      "add",
      "-q",
      lib,
      "lib",
    ]);
    expectReadOnly("git status", at(top));
    execFileSync("git", [
      "-C",
      top,
      "config",
      "--file",
      ".git/modules/lib/config",
      "core.worktree",
      root,
    ]);
    expectNotReadOnly("git status", at(top));

    const husky = repository("husky", [["core.hooksPath", ".husky/_"]]);
    mkdirSync(path.join(husky, ".husky/_"), { recursive: true });
    writeFileSync(path.join(husky, ".husky/_/pre-commit"), "#!/bin/sh\n", { mode: 0o755 });
    expectReadOnly("git status", at(husky));
    writeFileSync(path.join(husky, ".husky/_/post-index-change"), "#!/bin/sh\n", { mode: 0o755 });
    expectNotReadOnly("git status", at(husky));

    const outside = repository("worktree-outside", [["core.worktree", "/etc"]]);
    expectNotReadOnly("git status", at(outside));
  });

  it("a submodule's settings, a commondir, a worktree's settings, a hook and unreadable settings", () => {
    const sub = repository("submodule", []);
    mkdirSync(path.join(sub, ".git/modules/lib"), { recursive: true });
    execFileSync("git", ["init", "-q", "--bare", path.join(sub, ".git/modules/lib")]);
    expectReadOnly("git status", at(sub));
    writeFileSync(path.join(sub, ".git/modules/lib/config"), "[core]\n\tfsmonitor = ./m\n");
    expectNotReadOnly("git status", at(sub));

    const common = repository("commondir", []);
    writeFileSync(path.join(common, ".git/commondir"), "/elsewhere\n");
    expectNotReadOnly("git status", at(common));

    const worktree = repository("config-worktree", []);
    writeFileSync(path.join(worktree, ".git/config.worktree"), "[core]\npager = x\n");
    expectNotReadOnly("git status", at(worktree));

    const hooked = repository("hooked", []);
    expectReadOnly("git status", at(hooked));
    writeFileSync(path.join(hooked, ".git/hooks/post-index-change"), "#!/bin/sh\n", {
      mode: 0o755,
    });
    expectNotReadOnly("git status", at(hooked));

    const broken = repository("broken", []);
    writeFileSync(path.join(broken, ".git/config"), "[core\n");
    expectNotReadOnly("git status", at(broken));
    const large = repository("large", []);
    writeFileSync(path.join(large, ".git/config"), `[core]\n${"# x\n".repeat(20_000)}`);
    expectNotReadOnly("git status", at(large));
  });
});

describe("git in a repository whose files lead outside the working directories is not read-only", () => {
  const committed = (dir: string): string => {
    execFileSync("git", ["init", "-q", dir]);
    writeFileSync(path.join(dir, "secret.txt"), "KEY\n");
    execFileSync("git", ["-C", dir, "add", "secret.txt"]);
    execFileSync("git", [
      "-C",
      dir,
      "-c",
      "user.name=a",
      "-c",
      "user.email=a@b",
      "commit",
      "-qm",
      "x",
    ]);
    return execFileSync("git", ["-C", dir, "rev-parse", "HEAD:secret.txt"], {
      encoding: "utf8",
    }).trim();
  };
  const at = (dir: string): Partial<PermissionRequest> => ({
    workingDirectories: [dir],
    realPath: realPathOf,
    listDirectory: listDirectoryOf,
    readSmallFile: readSmallFileOf,
  });
  let outside: string;
  let blob: string;
  beforeAll(() => {
    outside = path.join(root, "layout-outside");
    blob = committed(outside);
  });
  const workingDirectory = (name: string): string => {
    const dir = path.join(root, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };

  it("a plain repository with history: read-only", () => {
    const dir = workingDirectory("layout-plain");
    committed(dir);
    for (const command of ["git status", "git log -p", "git show HEAD:secret.txt", "git diff"]) {
      expectReadOnly(command, at(dir));
    }
  });

  it("a .git that is a link to a repository elsewhere", () => {
    const dir = workingDirectory("layout-link");
    symlinkSync(path.join(outside, ".git"), path.join(dir, ".git"));
    expectNotReadOnly("git show HEAD:secret.txt", at(dir));
    expectNotReadOnly("git status", at(dir));
  });

  it("objects that lead elsewhere, or borrowed from elsewhere (objects/info/alternates)", () => {
    const linked = workingDirectory("layout-objects");
    execFileSync("git", ["init", "-q", linked]);
    rmSync(path.join(linked, ".git/objects"), { recursive: true });
    symlinkSync(path.join(outside, ".git/objects"), path.join(linked, ".git/objects"));
    expectNotReadOnly(`git cat-file -p ${blob}`, at(linked));

    const excludes = workingDirectory("layout-exclude");
    execFileSync("git", ["init", "-q", excludes]);
    rmSync(path.join(excludes, ".git/info/exclude"));
    symlinkSync(path.join(outside, "secret.txt"), path.join(excludes, ".git/info/exclude"));
    expectNotReadOnly("git check-ignore -v --no-index x", at(excludes));

    const borrowing = workingDirectory("layout-alternates");
    execFileSync("git", ["init", "-q", borrowing]);
    expectReadOnly(`git cat-file -p ${blob}`, at(borrowing));
    writeFileSync(
      path.join(borrowing, ".git/objects/info/alternates"),
      `${path.join(outside, ".git/objects")}\n`,
    );
    expectNotReadOnly(`git cat-file -p ${blob}`, at(borrowing));
    expectNotReadOnly("git log", at(borrowing));
  });

  it("--git-dir naming a .git file (gitdir: elsewhere)", () => {
    const dir = workingDirectory("layout-gitfile");
    writeFileSync(path.join(dir, "gf"), `gitdir: ${path.join(outside, ".git")}\n`);
    expectNotReadOnly("git --git-dir=gf show HEAD:secret.txt", at(dir));
  });

  it("a submodule checked out in the work tree, with a repository of its own or one elsewhere", () => {
    const dir = workingDirectory("layout-submodules");
    execFileSync("git", ["init", "-q", dir]);
    execFileSync("git", ["init", "-q", path.join(dir, "lib")]);
    writeFileSync(
      path.join(dir, ".gitmodules"),
      '[submodule "lib"]\n\tpath = lib\n\turl = ./lib\n',
    );
    expectReadOnly("git status", at(dir));
    execFileSync("git", ["-C", path.join(dir, "lib"), "config", "core.fsmonitor", "./m"]);
    expectNotReadOnly("git status", at(dir));

    const nested = workingDirectory("layout-submodule-nested");
    execFileSync("git", ["init", "-q", nested]);
    execFileSync("git", ["init", "-q", path.join(nested, "lib")]);
    execFileSync("git", ["init", "-q", path.join(nested, "lib/inner")]);
    writeFileSync(
      path.join(nested, ".gitmodules"),
      '[submodule "lib"]\n\tpath = lib\n\turl = ./lib\n',
    );
    writeFileSync(
      path.join(nested, "lib/.gitmodules"),
      '[submodule "inner"]\n\tpath = inner\n\turl = ./inner\n',
    );
    expectReadOnly("git status", at(nested));
    execFileSync("git", ["-C", path.join(nested, "lib/inner"), "config", "core.pager", "./p"]);
    expectNotReadOnly("git status", at(nested));

    const far = workingDirectory("layout-submodule-elsewhere");
    execFileSync("git", ["init", "-q", far]);
    mkdirSync(path.join(far, "lib"));
    writeFileSync(path.join(far, "lib/.git"), `gitdir: ${path.join(outside, ".git")}\n`);
    writeFileSync(path.join(far, ".gitmodules"), '[submodule "lib"]\n\tpath = lib\n\turl = x\n');
    expectNotReadOnly("git status", at(far));
  });

  it("git config --includes follows include.path wherever it leads", () => {
    const dir = workingDirectory("layout-includes");
    writeFileSync(path.join(dir, "cfg"), "[include]\n\tpath = /etc/gitconfig\n");
    expectReadOnly("git config -f cfg --list", at(dir));
    expectNotReadOnly("git config -f cfg --includes --list", at(dir));
  });
});
