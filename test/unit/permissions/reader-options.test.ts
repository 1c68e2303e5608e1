import { describe, expect, it } from "vitest";
import type { OptionTable } from "../../../src/permissions/command-options.js";
import { GIT_READERS } from "../../../src/permissions/git-readers.js";
import { READER_PROGRAMS } from "../../../src/permissions/reader-programs.js";
import { expectNeverReadOnly, expectNotReadOnly, expectReadOnly } from "./modes.js";

/**
 * Every program on the read-only list: a call that stays read-only, and each option that
 * disqualifies it (or whose value is a file it reads, given one outside the working directories).
 * In a template, `{}` stands for the option: a long option is tried under every abbreviation
 * (`--out`, `--outp`, …), since GNU programs and git accept any unambiguous prefix.
 */
interface ProgramCases {
  ok: string;
  no?: Record<string, string>;
}

const grep: ProgramCases = {
  ok: "grep -rn TODO src",
  no: {
    "-f": "grep {} /srv/patterns a.txt",
    "--file": "grep {}=/srv/patterns a.txt",
    "--exclude-from": "grep -r {}=/srv/x foo .",
    "-R": "grep {} foo .",
    "--dereference-recursive": "grep {} foo .",
  },
};
const checksum = (name: string): ProgramCases => ({
  ok: `${name} a.bin`,
  // The list inside names files anywhere.
  no: { "-c": `${name} {} sums.txt`, "--check": `${name} {} sums.txt` },
});
const ls = (name: string, ok: string): ProgramCases => ({
  ok,
  no: { "-L": `${name} {} -R .`, "--dereference": `${name} {} -R .` },
});

const PROGRAMS: Record<string, ProgramCases> = {
  ls: ls("ls", "ls -la --color=never src"),
  dir: ls("dir", "dir -a"),
  vdir: ls("vdir", "vdir src"),
  cat: { ok: "cat -n a.txt" },
  head: { ok: "head -20 a.txt" },
  tail: { ok: "tail -n 5 -f a.txt" },
  wc: { ok: "wc -l a.txt", no: { "--files0-from": "wc {}=list" } },
  pwd: { ok: "pwd -P" },
  echo: { ok: "echo -delete" },
  printf: { ok: "printf '%s\\n' --output" },
  grep,
  egrep: { ...grep, ok: "egrep 'a|b' a.txt" },
  fgrep: { ...grep, ok: "fgrep -x a a.txt" },
  rg: {
    ok: "rg -n --type ts useState src",
    no: {
      "-z": "rg {} foo",
      "--search-zip": "rg {} foo",
      "--pre": "rg {}=/bin/sh foo",
      "--pre-glob": "rg {}='*' foo",
      "--hostname-bin": "rg {}=/bin/sh foo",
      "-L": "rg {} foo",
      "--follow": "rg {} foo",
      "-f": "rg {} /srv/patterns",
      "--file": "rg {}=/srv/patterns",
      "--ignore-file": "rg {}=/srv/ignore foo",
    },
  },
  tree: {
    ok: "tree -L 2 src",
    no: {
      "-o": "tree {} /tmp/out",
      "-R": "tree {}",
      "-l": "tree {}",
      "--fromfile": "tree {} /srv/passwd",
      "--gitfile": "tree {}=/srv/gitignore",
    },
  },
  file: {
    ok: "file -b a.txt",
    no: {
      "-C": "file {} -m magic",
      "--compile": "file {}",
      "-m": "file {} /srv/magic a.txt",
      "--magic-file": "file {}=/srv/magic a.txt",
      "-f": "file {} list",
      "--files-from": "file {}=list",
      "a list of magic files": "file -m magic:/srv/magic a.txt",
    },
  },
  stat: { ok: "stat -c %s a.txt" },
  du: {
    ok: "du -sh src",
    no: {
      "-L": "du {} src",
      "--dereference": "du {} src",
      "-X": "du {} /srv/x src",
      "--exclude-from": "du {}=/srv/x src",
      "--files0-from": "du {}=list",
    },
  },
  df: { ok: "df -h /" },
  diff: {
    ok: "diff -u a.txt b.txt",
    no: {
      "-X": "diff -r {} /srv/x a b",
      "--exclude-from": "diff -r {}=/srv/x a b",
      "--from-file": "diff {}=/srv/passwd a.txt",
      "--to-file": "diff {}=/srv/passwd a.txt",
      "-r": "diff -r src lib",
      "--recursive": "diff --recursive src lib",
    },
  },
  cmp: { ok: "cmp a.bin b.bin" },
  comm: { ok: "comm -12 a.txt b.txt" },
  cut: { ok: "cut -d, -f1 a.csv" },
  tr: { ok: "tr a-z A-Z" },
  nl: { ok: "nl -ba a.txt" },
  sort: {
    ok: "sort -rn -k2 a.txt",
    no: {
      "-o": "sort {} /tmp/out a.txt",
      "--output": "sort {}=/tmp/out a.txt",
      "-T": "sort {} /tmp a.txt",
      "--temporary-directory": "sort {}=/tmp a.txt",
      "--compress-program": "sort {}=/bin/sh a.txt",
      "--files0-from": "sort {}=list",
      "--random-source": "sort -R {}=/srv/shadow a.txt",
    },
  },
  uniq: { ok: "uniq -c a.txt", no: { writes: "uniq a.txt out.txt" } },
  column: { ok: "column -t a.txt" },
  fold: { ok: "fold -w 80 a.txt" },
  rev: { ok: "rev a.txt" },
  tac: { ok: "tac a.txt" },
  paste: { ok: "paste -sd, a.txt" },
  expand: { ok: "expand -t 4 a.txt" },
  unexpand: { ok: "unexpand -a a.txt" },
  od: { ok: "od -c a.bin" },
  hexdump: { ok: "hexdump -C a.bin", no: { "-f": "hexdump {} /srv/format a.bin" } },
  strings: { ok: "strings -n 8 a.bin", no: { "@FILE": "strings @../x" } },
  md5sum: checksum("md5sum"),
  sha1sum: checksum("sha1sum"),
  sha224sum: checksum("sha224sum"),
  sha256sum: checksum("sha256sum"),
  sha384sum: checksum("sha384sum"),
  sha512sum: checksum("sha512sum"),
  b2sum: checksum("b2sum"),
  cksum: { ok: "cksum a.bin", no: { "--check": "cksum {} sums.txt" } },
  base64: { ok: "base64 -d a.b64" },
  basename: { ok: "basename /srv/passwd" },
  dirname: { ok: "dirname /srv/passwd" },
  realpath: {
    ok: "realpath --relative-to=src src/a.ts",
    no: {
      "--relative-to": "realpath {}=/srv/link src/a.ts",
      "--relative-base": "realpath {}=/srv/link src/a.ts",
    },
  },
  readlink: { ok: "readlink -f src/link" },
  which: { ok: "which node" },
  whereis: { ok: "whereis ls" },
  type: { ok: "type -a ls" },
  printenv: { ok: "printenv HOME" },
  env: { ok: "env" },
  jq: {
    ok: "jq --arg name x -r .name package.json",
    no: {
      "-f": "jq {} /srv/prog a.json",
      "--from-file": "jq {} /srv/prog a.json",
      "-L": "jq {} /srv . a.json",
      "--slurpfile": "jq {} x /srv/shadow . a.json",
      "--rawfile": "jq {} x /srv/shadow . a.json",
      "-f inside": "jq -f prog.jq a.json",
      import: 'jq -n \'import "secret" as $s {search: "/srv"}; $s\'',
      include: "jq -n 'include \"x\"; .'",
      modulemeta: "jq -n '\"m\" | modulemeta'",
    },
  },
  seq: { ok: "seq 1 10" },
  true: { ok: "true" },
  false: { ok: "false" },
  test: { ok: "test -f a.txt" },
  "[": { ok: "[ -f a.txt ]" },
  sleep: { ok: "sleep 1" },
  date: {
    ok: "date +%s",
    no: {
      operand: "date 010100002020",
      "-s": "date {} 2020-01-01",
      "--set": "date {}=2020-01-01",
      "-f": "date {} /srv/dates",
      "--file": "date {}=/srv/dates",
      "-r": "date {} /srv/shadow",
      "--reference": "date {}=/srv/shadow",
    },
  },
  uname: { ok: "uname -a" },
  whoami: { ok: "whoami" },
  id: { ok: "id -u" },
  groups: { ok: "groups" },
  hostname: { ok: "hostname -f", no: { operand: "hostname evil" } },
  nproc: { ok: "nproc" },
  uptime: { ok: "uptime -p" },
  ps: { ok: "ps aux" },
  free: { ok: "free -h" },
};

const log = (sub: string): ProgramCases => ({
  ok: `git ${sub} --oneline -5 -- src`,
  no: {
    "-O": `git ${sub} -p {} /srv/order`,
    "--output": `git ${sub} {}=/tmp/out`,
    "--ext-diff": `git ${sub} -p {}`,
    "%G": `git ${sub} --format=%G?`,
  },
});

const GIT: Record<string, ProgramCases> = {
  status: { ok: "git status --short" },
  log: log("log"),
  whatchanged: log("whatchanged"),
  show: log("show"),
  diff: {
    ok: "git diff --stat HEAD~1 -- src",
    no: {
      "-O": "git diff {} /srv/order",
      "--output": "git diff {}=/tmp/out",
      "--ext-diff": "git diff {}",
      outside: "git diff --no-index /srv/passwd a.txt",
    },
  },
  shortlog: { ...log("shortlog"), ok: "git shortlog -sn" },
  "rev-list": { ...log("rev-list"), ok: "git rev-list --count HEAD" },
  blame: {
    ok: "git blame -L 1,5 a.txt",
    no: {
      "-S": "git blame {} /srv/revs a.txt",
      "--contents": "git blame {} /srv/passwd a.txt",
      "--ignore-revs-file": "git blame {}=/srv/revs a.txt",
    },
  },
  describe: { ok: "git describe --tags" },
  "rev-parse": {
    ok: "git rev-parse --show-toplevel",
    no: { "--resolve-git-dir": "git rev-parse {} /srv/x" },
  },
  "ls-files": {
    ok: "git ls-files -m",
    no: { "-X": "git ls-files -o {} /srv/x", "--exclude-from": "git ls-files -o {}=/srv/x" },
  },
  "ls-tree": { ok: "git ls-tree -r HEAD" },
  "ls-remote": {
    ok: "git ls-remote --heads .",
    no: {
      "--upload-pack": "git ls-remote {}='touch X' .",
      "--exec": "git ls-remote {}='touch X' .",
      helper: "git ls-remote 'ext::sh -c touch% X'",
      url: "git ls-remote https://example.com/x.git",
      scp: "git ls-remote git@example.com:x.git",
      file: "git ls-remote file:///srv/x.git",
      "a remote's name": "git ls-remote --heads origin",
      "the default remote": "git ls-remote",
    },
  },
  "cat-file": { ok: "git cat-file -p HEAD" },
  "show-ref": { ok: "git show-ref --tags" },
  "merge-base": { ok: "git merge-base HEAD main" },
  "name-rev": { ok: "git name-rev HEAD" },
  "for-each-ref": {
    ok: "git for-each-ref --format='%(refname)'",
    no: { signature: "git for-each-ref --format='%(signature)'" },
  },
  "check-ignore": { ok: "git check-ignore -v a.txt" },
  "count-objects": { ok: "git count-objects -v" },
  grep: {
    ok: "git grep -n TODO",
    no: {
      "-O": "git grep {} TODO",
      "--open-files-in-pager": "git grep {}=x TODO",
      "-f": "git grep {} /srv/patterns",
      "--file": "git grep {}=/srv/patterns",
    },
  },
  reflog: { ok: "git reflog", no: { expire: "git reflog expire --all" } },
  "reflog show": log("reflog show"),
  stash: { ok: "git stash list", no: { push: "git stash", drop: "git stash drop" } },
  "stash list": log("stash list"),
  "stash show": log("stash show"),
  worktree: { ok: "git worktree list", no: { add: "git worktree add ../x" } },
  remote: { ok: "git remote -v", no: { add: "git remote add x y" } },
  branch: { ok: "git branch -a", no: { delete: "git branch -D old" } },
  tag: { ok: "git tag -l", no: { create: "git tag v1" } },
  config: {
    ok: "git config --local --get user.name",
    no: {
      set: "git config user.name x",
      "the user's and the system's": "git config --get user.name",
      global: "git config --global --list",
      "-f": "git config {} /srv/gitconfig --list",
      "--file": "git config {}=/srv/gitconfig --list",
    },
  },
  help: { ok: "git help log" },
  version: { ok: "git --version" },
};

/** git's own options, before the subcommand. */
const GIT_GLOBAL: Record<string, string> = {
  "-C": "git {} / log",
  "-c": "git {} core.pager=evil log",
  "--config-env": "git {}=core.pager:X log",
  "--exec-path": "git {}=/tmp log",
  "--git-dir": "git {}=/srv/repo log",
  "--work-tree": "git {}=/srv log",
  "--list-cmds": "git {}=main log",
};

/**
 * Each spelling of an option: a long option by every prefix past `--` (but a prefix that is itself
 * the full name of another option of the program, such as `--exclude` of `--exclude-from`, names
 * that option), a short one as is.
 */
function spellings(option: string, table?: OptionTable): string[] {
  if (!option.startsWith("--")) return [option];
  return Array.from({ length: option.length - 2 }, (_, k) => option.slice(0, 3 + k)).filter(
    (prefix) => prefix === option || table?.long.has(prefix.slice(2)) !== true,
  );
}

function commands(template: string, option: string, table?: OptionTable): string[] {
  return template.includes("{}")
    ? spellings(option, table).map((spelling) => template.replace("{}", spelling))
    : [template];
}

/** The option table a case's program is read with. */
function tableOf(name: string): OptionTable | undefined {
  return name.startsWith("git ")
    ? GIT_READERS[name.slice(4)]?.options
    : READER_PROGRAMS[name]?.options;
}

/** The options of a table that do more than read what they are given. */
function effectOptions(table: OptionTable): string[] {
  return [...table.short.values(), ...table.long.values()]
    .filter((spec) => spec.effect !== undefined)
    .map((spec) => spec.name);
}

describe("read-only programs", () => {
  it("every program and git subcommand on the read-only list has cases", () => {
    expect(Object.keys(PROGRAMS).sort()).toEqual(Object.keys(READER_PROGRAMS).sort());
    expect(Object.keys(GIT).sort()).toEqual(Object.keys(GIT_READERS).sort());
  });

  it("every option that runs, writes, follows links or reads a named file has a case", () => {
    const missing: string[] = [];
    for (const [tables, cases] of [
      [READER_PROGRAMS, PROGRAMS],
      [GIT_READERS, GIT],
    ] as const) {
      for (const [name, spec] of Object.entries(tables)) {
        for (const option of effectOptions(spec.options)) {
          if (cases[name]?.no?.[option] === undefined) missing.push(`${name} ${option}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  const all = {
    ...PROGRAMS,
    ...Object.fromEntries(Object.entries(GIT).map(([k, v]) => [`git ${k}`, v])),
  };

  it.each(Object.entries(all))("%s: the plain call is read-only in every mode", (_, cases) => {
    expectReadOnly(cases.ok);
  });

  const disqualifying = Object.entries(all).flatMap(([name, cases]) =>
    Object.entries(cases.no ?? {}).map(([option, template]) => [name, option, template] as const),
  );
  it.each(disqualifying)(
    "%s %s disqualifies it, in every spelling and mode",
    (name, option, template) => {
      for (const command of commands(template, option, tableOf(name))) {
        expectNotReadOnly(command);
      }
    },
  );

  it.each(Object.entries(GIT_GLOBAL))("git %s disqualifies git", (option, template) => {
    for (const command of commands(template, option)) expectNotReadOnly(command);
  });

  it.each([
    ["combined short flags", "sort -ro /tmp/out a.txt"],
    ["value attached to a short option", "sort -o/tmp/out a.txt"],
    ["value as the next word", "sort --output /tmp/out a.txt"],
    ["an option after the operands", "sort a.txt -o /tmp/out"],
    ["an ambiguous abbreviation", "git grep --o TODO"],
    ["an unknown option", "cat --bogus a.txt"],
    ["an unknown short flag", "ls -Y"],
    ["an unknown git subcommand", "git frobnicate"],
    ["a program by path", "/bin/cat a.txt"],
    ["a program the list does not know", "awk '{print}' a.txt"],
  ])("%s: %s is not read-only", (_, command) => {
    expectNotReadOnly(command);
  });

  it.each([
    ["find . -name '*.ts' -not -path './node_modules/*'"],
    ["find src -type f -newer a.txt -print0"],
    ["sed -n '1,5p' a.txt"],
    ["sed -e 's/a/b/g' -e '/x/d' a.txt"],
    ["sed -n '/start/,/end/{p}' a.txt"],
    ["sed 'r notes.txt' a.txt"],
    ["sed -s -n '$p' a.txt b.txt"],
  ])("%s is read-only", (command) => {
    expectReadOnly(command);
  });

  it.each([
    ["-exec", "find . -exec cat {} ;"],
    ["-execdir", "find . -execdir cat {} +"],
    ["-ok", "find . -ok rm {} ;"],
    ["-okdir", "find . -okdir rm {} ;"],
    ["-delete", "find . -delete"],
    ["-fprint", "find . -fprint /tmp/out"],
    ["-fprint0", "find . -fprint0 /tmp/out"],
    ["-fprintf", "find . -fprintf /tmp/out %p"],
    ["-fls", "find . -fls /tmp/out"],
    ["-follow", "find . -follow"],
    ["-L", "find -L ."],
    ["an unknown primary", "find . -frobnicate"],
    ["a start outside", "find / -name passwd"],
    ["-newer outside", "find . -newer /srv/shadow"],
  ])("find %s disqualifies it", (_, command) => {
    expectNotReadOnly(command);
  });

  it.each([
    ["an unknown option", "sed --bogus p a.txt"],
    ["a file outside", "sed -n p /srv/passwd"],
  ])("sed %s disqualifies it", (_, command) => {
    expectNotReadOnly(command);
  });

  it.each([
    ["-i", "sed -i 's/a/b/' a.txt"],
    ["--in-place", "sed --in-place=.bak 's/a/b/' a.txt"],
    ["--in-place abbreviated", "sed --in 's/a/b/' a.txt"],
  ])("sed %s edits: never read-only", (_, command) => {
    expectNeverReadOnly(command);
  });
});

describe("wrappers", () => {
  it.each([
    "time cat a.txt",
    "nice cat a.txt",
    "nice -n 5 cat a.txt",
    "nice -5 cat a.txt",
    "nohup cat a.txt",
    "timeout 5 cat a.txt",
    "timeout -s KILL 5s cat a.txt",
    "stdbuf -oL cat a.txt",
    "env -i cat a.txt",
    "env -u PAGER cat a.txt",
    "command cat a.txt",
    "command -v node",
    "exec cat a.txt",
    "builtin pwd",
    "nice timeout 5 time cat a.txt",
  ])("%s wraps a reader: read-only", (command) => {
    expectReadOnly(command);
  });

  it.each([
    ["time -o", "time -o /tmp/out cat a.txt"],
    ["time --output", "time --output=/tmp/out cat a.txt"],
    ["time --output abbreviated", "time --out=/tmp/out cat a.txt"],
    ["time -a", "time -a -o out cat a.txt"],
    ["time --append", "time --append -o out cat a.txt"],
    ["nice time -o", "nice time -o /tmp/out cat a.txt"],
    ["env -C outside", "env -C /srv cat passwd"],
    ["env --chdir outside", "env --chdir=/srv cat passwd"],
    ["env with an assignment", "env PAGER=evil git log"],
    ["xargs", "echo a.txt | xargs cat"],
    ["xargs with a reader", "echo -delete | xargs find ."],
    ["xargs env", "echo touch X | xargs env"],
    ["sudo", "sudo cat a.txt"],
    ["doas", "doas cat a.txt"],
    ["a wrapper around a writer", "nice touch a.txt"],
    ["timeout around a writer", "timeout 5 rm a.txt"],
    ["a wrapper without a command", "nice"],
    ["an unknown wrapper option", "nice --bogus cat a.txt"],
  ])("%s: %s is not read-only", (_, command) => {
    expectNotReadOnly(command);
  });

  it.each([
    ["env -S", "env -S 'cat a.txt'"],
    ["env --split-string", "env --split-string='cat a.txt'"],
  ])("%s: %s is never read-only", (_, command) => {
    expectNeverReadOnly(command);
  });
});
