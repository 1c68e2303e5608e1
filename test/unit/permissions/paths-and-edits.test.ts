import { describe, expect, it } from "vitest";
import type { PermissionRequest } from "../../../src/permissions/index.js";
import { WORKDIR, allow, bash, decide, deny } from "./helpers.js";
import {
  BY_MODE,
  MODES,
  expectNeverReadOnly,
  expectNotReadOnly,
  expectReadOnly,
  safetyByMode,
} from "./modes.js";

/**
 * Paths judged where they lead, the edit programs of accept_edits, and sed scripts, in all five
 * modes. Symbolic links come from a fake `realPath`: `WORKDIR/alias` → `WORKDIR/secret`,
 * `WORKDIR/out` → `/srv/data`, `WORKDIR/hook` → `WORKDIR/.git/hooks/pre-commit`.
 */
const LINKS: Record<string, string> = {
  [`${WORKDIR}/alias`]: `${WORKDIR}/secret`,
  [`${WORKDIR}/out`]: "/srv/data",
  [`${WORKDIR}/hook`]: `${WORKDIR}/.git/hooks/pre-commit`,
};
function realPath(path: string): string {
  for (const [link, target] of Object.entries(LINKS)) {
    if (path === link || path.startsWith(`${link}/`)) return target + path.slice(link.length);
  }
  return path;
}
const WITH_LINKS: Partial<PermissionRequest> = { realPath };

describe("reads outside the working directories", () => {
  it.each([
    "cat /srv/data/secret.txt",
    "cat ../other/notes.txt",
    "cd /srv && cat data/secret.txt",
    "cd .. && ls",
    "pushd /srv && cat data/x",
    "cat < /srv/data/x",
    "head -n1 a.txt /srv/data/x",
    "ls /srv",
    "git -C /srv log",
    "env -C /srv cat x",
    "cd - && cat a.txt",
    "popd && cat a.txt",
    // The directory stack decides where these run: pushd +1 and pushd alone rotate it onto /srv,
    // popd -n drops what was under /srv and stays there.
    "pushd /srv; pushd /work/repo; pushd +1; cat data/x",
    "pushd /srv; pushd /work/repo; pushd; cat data/x",
    "pushd /srv; popd -n; cat data/x",
    "pushd /srv; popd +1; cat data/x",
    "pushd -n /srv; pushd +1; cat data/x",
    // A `cd` may fail and leave the directory where it was: what runs after `;` or `||` may run
    // from either, and what runs after `&&` only from where it went.
    "cd gone 2>/dev/null; cd ..; cat secret.txt",
    "cd /srv 2>/dev/null || cd /work/repo; cat x",
    "cd sub; cat ../secret.txt",
    "cd sub || cat ../secret.txt",
    "cd sub && ls || cat ../secret.txt",
    "! cd sub && cat ../secret.txt",
    "cd sub\ncat ../secret.txt",
    // Run by another program, in a pipeline or in the background, a cd moves another process.
    "env cd sub && cat ../secret.txt",
    "nice cd sub && cat ../x",
    "cd sub | cat ../x",
    "cd sub & cat ../x",
    "cd sub & cd .. && cat x",
    "pushd sub; popd; cat ../x",
    // A directory named by a variable is not known (an empty one is home).
    "cd $OLDPWD && cat x",
    "pushd $DIR; cat x",
    "grep -r TODO /srv",
    "cat {a.txt,/srv/secret}",
    "cat $TMPDIR/x",
    "ls $OLDPWD",
    "cat a.txt > $OUT",
  ])("%s is not read-only", (command) => {
    expectNotReadOnly(command);
  });

  it.each([
    ["cat /etc/shadow", "safety.dangerous_path"],
    ["cat ~/.ssh/id_rsa", "safety.dangerous_path"],
    ["cd / && cat etc/passwd", "safety.dangerous_path"],
  ])("%s asks in every mode but bypass (%s)", (command) => {
    expectNeverReadOnly(command);
    expect(decide("Bash", bash(command)).behavior).toBe("ask");
  });

  it.each(["cd /etc && cat passwd", "cd ~ && cat .ssh/id_rsa"])(
    "%s: the directory change is followed",
    (command) => {
      for (const mode of MODES) {
        const decision = decide("Bash", bash(command), mode);
        expect(decision.check, `${command} in ${mode}`).not.toBe("read_only");
      }
    },
  );

  it.each([
    "cd src && cat a.ts",
    "cd src && cd .. && ls",
    "pushd src && ls && popd",
    "cd packages/a && cat ../../package.json",
    "cd packages/a &&\n  cat ../b/index.ts",
    "cd src && ls && cat ../README.md",
    "command cd src && cat ../a.txt",
    "pushd src && cat ../a.txt && popd && cat a.txt",
    "cd src; cat a.ts",
    "cd src || ls; cat a.ts",
    "cat ./a.txt ../repo/b.txt",
    "ls /dev/null",
    "cat {a,b}.txt",
    "echo $PATH",
    "grep -e 'x$' a.txt",
  ])("%s stays inside: read-only", (command) => {
    expectReadOnly(command);
  });

  it("a link that leads outside makes a read outside", () => {
    expectReadOnly("cat alias/key.txt", WITH_LINKS);
    expectNotReadOnly("cat out/secret.txt", WITH_LINKS);
  });

  it("a command's link/.. is the parent of where the link leads; a file tool's folds first", () => {
    // The shell opens out/../x through the system: the parent of /srv/data, not WORKDIR.
    for (const command of [
      "cat out/../a.txt",
      "ls out/..",
      "grep -r x out/..",
      "cd out/.. && ls",
    ]) {
      expectNotReadOnly(command, WITH_LINKS);
    }
    expectReadOnly("cat alias/../a.txt", WITH_LINKS);
    expectReadOnly("cat sub/../a.txt", WITH_LINKS);
    // The Read tool folds `..` before it follows links, and opens WORKDIR/a.txt.
    expect(decide("Read", { file_path: "out/../a.txt" }, "default", [], WITH_LINKS)).toMatchObject({
      behavior: "allow",
    });
  });
});

describe("deny rules match where a path leads", () => {
  const rules = [deny("Read", "./secret/**")];
  it.each([
    ["Read", { file_path: "alias/key.txt" }],
    ["Read", { file_path: `${WORKDIR}/alias/key.txt` }],
    ["Grep", { pattern: "x", path: "alias" }],
    ["Grep", { pattern: "x", path: "alias/key.txt" }],
    ["Glob", { pattern: "*", path: "alias" }],
    ["Glob", { pattern: "alias/*" }],
    ["Bash", bash("cat alias/key.txt")],
    ["Bash", bash("head -1 secret/key.txt | wc -c")],
    ["Bash", bash("grep KEY alias/key.txt")],
    ["Bash", bash("cd alias && cat key.txt")],
    ["Bash", bash("wc < alias/key.txt")],
    ["Bash", bash("cat */key.txt")],
    ["Bash", bash("cat secre?/key.txt")],
    ["Bash", bash("cat s[a-z]cret/*")],
    ["Bash", bash("grep -r KEY *")],
    ["Bash", bash("cat {public,secret}/key.txt")],
    // A command that reads a directory's whole tree reads what the rule covers in it.
    ["Bash", bash("grep -r KEY .")],
    ["Bash", bash("grep -rn KEY")],
    ["Bash", bash("grep --recursive KEY ./")],
    ["Bash", bash("cd public && grep -r KEY ..")],
    ["Bash", bash(`grep -r KEY ${WORKDIR}`)],
    ["Bash", bash("rg KEY")],
    ["Bash", bash("rg -l KEY . public")],
    ["Bash", bash("find .")],
    ["Bash", bash("find . -name '*.txt'")],
    ["Bash", bash("du -a")],
    ["Bash", bash("tree")],
    ["Bash", bash("ls -R")],
    ["Bash", bash("ls -laR .")],
    ["Bash", bash("diff -r --no-dereference . public")],
    ["Bash", bash("git grep KEY")],
    ["Bash", bash("git ls-files")],
    // What a copy or a move takes, it reads: it would be readable where it lands.
    ["Bash", bash("cp -r secret pub")],
    ["Bash", bash("cp alias/key.txt pub.txt")],
    ["Bash", bash("mv secret pub")],
    ["Bash", bash("cp -r . ../copy")],
    ["Bash", bash("cp -t pub secret/key.txt")],
    // A file of the repository named by `rev:path`, or a tree that holds it.
    ["Bash", bash("git show HEAD:secret/key.txt")],
    ["Bash", bash("git show HEAD~2:./secret/key.txt")],
    ["Bash", bash("cd public && git show HEAD:../secret/key.txt")],
    ["Bash", bash("git cat-file -p :secret/key.txt")],
    ["Bash", bash("git show :0:secret/key.txt")],
    ["Bash", bash("git diff HEAD:secret/key.txt HEAD:public/a.txt")],
    ["Bash", bash("git ls-tree -r HEAD:")],
    // Where git's own matching, or a revision, takes a search (directories not listed here).
    ["Bash", bash("git grep KEY HEAD")],
    ["Bash", bash("git grep KEY -- '*key.txt'")],
    ["Bash", bash("cd public && git grep KEY ':(top)'")],
    ["Bash", bash("cd public && git ls-files ':!x'")],
    ["Bash", bash("git grep --no-index KEY public")],
    // What git prints of every file when no path limits it: changes, patches, any object.
    ["Bash", bash("git diff")],
    ["Bash", bash("git diff --cached")],
    ["Bash", bash("git show")],
    ["Bash", bash("git log -p")],
    ["Bash", bash("git log --patch --since=1.week")],
    ["Bash", bash("git log -L1,5:secret/key.txt")],
    ["Bash", bash("git stash show -p")],
    ["Bash", bash("git cat-file -p 0123abcd")],
    ["Bash", bash("git cat-file --batch")],
    // What sed -i edits or pulls in, and a file opened for reading and writing, it reads; a backup
    // moves the target aside.
    ["Bash", bash("sed -i '1r secret/key.txt' public/a.txt")],
    ["Bash", bash("sed -i 'w /dev/stdout' secret/key.txt")],
    ["Bash", bash("cat <> secret/key.txt")],
    ["Bash", bash("cat 0<>alias/key.txt")],
    ["Bash", bash("mv -b -T public secret")],
    ["Bash", bash("mv --exchange public secret")],
    ["Bash", bash("cp --backup=numbered public/a.txt secret/key.txt")],
  ])("%s %j is denied in every mode", (tool, input) => {
    for (const mode of MODES) {
      const decision = decide(tool, input, mode, rules, WITH_LINKS);
      expect(decision, `${mode}: ${decision.reason}`).toMatchObject({
        behavior: "deny",
        check: "rule.deny",
      });
    }
  });

  it("an Edit deny rule reaches Write through a link and Bash writes", () => {
    const editRules = [deny("Edit", "./secret/**")];
    for (const [tool, input] of [
      ["Write", { file_path: "alias/key.txt", content: "x" }],
      ["Edit", { file_path: "alias/key.txt", old_string: "a", new_string: "b" }],
      ["Bash", bash("echo x > alias/key.txt")],
      ["Bash", bash("rm alias/key.txt")],
      ["Bash", bash("sed -i s/a/b/ alias/key.txt")],
    ] as const) {
      for (const mode of MODES) {
        const decision = decide(tool, input, mode, editRules, WITH_LINKS);
        expect(decision.behavior, `${tool} ${JSON.stringify(input)} in ${mode}`).toBe("deny");
      }
    }
  });

  it.each([
    ["Read", { file_path: "public/a.txt" }],
    ["Bash", bash("cat *.txt")],
    ["Bash", bash("cat public/*")],
    ["Bash", bash("cat src/secret/x")],
    ["Bash", bash("ls")],
    ["Bash", bash("ls -la .")],
    ["Bash", bash("grep KEY .")],
    ["Bash", bash("grep -r KEY public src")],
    ["Bash", bash("rg KEY public")],
    ["Bash", bash("find public -name '*.txt'")],
    ["Bash", bash("du -sh public")],
    ["Bash", bash("ls -R public")],
    ["Bash", bash("git show HEAD:public/a.txt")],
    ["Bash", bash("git log --oneline")],
    ["Bash", bash("git log --stat -5")],
    ["Bash", bash("git cat-file -p HEAD:public/a.txt")],
    ["Grep", { pattern: "KEY" }],
    ["Grep", { pattern: "KEY", path: "." }],
  ])("%s %j neither names nor may name a file under the rule: not denied", (tool, input) => {
    const decision = decide(tool, input, "default", rules, WITH_LINKS);
    expect(decision).toMatchObject({ behavior: "allow", check: "read_only" });
  });

  it("an allow rule must match where a write leads", () => {
    const rule = [allow("Write", "./out/**")];
    const decision = decide(
      "Write",
      { file_path: "out/x.txt", content: "x" },
      "default",
      rule,
      WITH_LINKS,
    );
    expect(decision.behavior).toBe("ask");
  });

  it("a write through a link to a sensitive file is a safety ASK", () => {
    for (const [tool, input] of [
      ["Write", { file_path: "hook", content: "x" }],
      ["Bash", bash("echo evil > hook")],
    ] as const) {
      const decision = decide(tool, input, "accept_edits", [], WITH_LINKS);
      expect(decision, decision.reason).toMatchObject({
        behavior: "ask",
        check: "safety.dangerous_path",
      });
    }
  });
});

describe("edit programs in accept_edits and dont_ask", () => {
  it.each([
    "mkdir -p build/out",
    "touch -c a.txt",
    "rm -f old.txt",
    "rmdir -p empty/dir",
    "mv -f a.txt b.txt",
    "mv -t dest a.txt",
    "cp src/a.ts copy.ts",
    "cp --target-directory=dest a.txt",
    "sed -i 's/a/b/' a.txt",
    "sed -i.bak -e 's/a/b/' a.txt",
    "cat > notes.md",
  ])("%s edits inside: allowed", (command) => {
    for (const mode of ["accept_edits", "dont_ask"] as const) {
      expect(decide("Bash", bash(command), mode)).toMatchObject({
        behavior: "allow",
        check: "working_directory.edit",
      });
    }
    expect(decide("Bash", bash(command), "default").behavior).toBe("ask");
  });

  it.each([
    ["an operand outside", "cp a.txt /srv/a.txt"],
    ["a source outside", "cp /srv/secret.txt a.txt"],
    ["-t outside", "mv -t /srv a.txt"],
    ["--target-directory outside", "cp --target=/srv a.txt"],
    ["touch -r outside", "touch -r /srv/ref a.txt"],
    ["cp -L follows links", "cp -rL src copy"],
    ["cp --dereference", "cp -r --deref src copy"],
    ["an unknown option", "mkdir --bogus x"],
    ["sed -i on a file outside", "sed -i s/a/b/ /srv/a.txt"],
    ["sed -i --follow-symlinks", "sed -i --follow-symlinks s/a/b/ a.txt"],
    ["sed without -i", "sed 's/a/b/' a.txt > /srv/out"],
    ["a program off the list", "chmod 644 a.txt"],
    ["a directory change", "cd src && touch a.txt"],
    ["an assignment", "X=1 touch a.txt"],
    ["through a wrapper", "nice touch a.txt"],
    ["a path from a variable", "rm -f $TMPDIR/x"],
    ["a brace that leads outside", "touch {a.txt,/srv/b.txt}"],
  ])("%s: %s is not an edit inside", (_, command) => {
    for (const mode of ["accept_edits", "dont_ask"] as const) {
      const decision = decide("Bash", bash(command), mode);
      expect(decision.check, `${command} in ${mode}: ${decision.reason}`).not.toBe(
        "working_directory.edit",
      );
      expect(decision.behavior, `${command} in ${mode}`).not.toBe("allow");
    }
  });

  it("an operand whose link leads outside is not an edit inside", () => {
    const decision = decide("Bash", bash("touch out/x"), "accept_edits", [], WITH_LINKS);
    expect(decision).toMatchObject(BY_MODE.accept_edits);
  });
});

describe("removal globs", () => {
  it.each(["rm -r ?*", "rm -r *", "rm -rf .??*", "rm -r [!.]*", "rm -r ./**", "rm src/../*"])(
    "%s removes everything: rm_root in every mode",
    (command) => {
      const expected = safetyByMode("safety.rm_root");
      for (const mode of MODES) {
        expect(decide("Bash", bash(command), mode), `${command} in ${mode}`).toMatchObject(
          expected[mode],
        );
      }
    },
  );

  it("a glob with a literal part is an ordinary edit", () => {
    expect(decide("Bash", bash("rm -r build-*"), "accept_edits").check).toBe(
      "working_directory.edit",
    );
  });
});

describe("sed scripts", () => {
  it.each([
    ["e", "sed -n '1e touch X' a.txt"],
    ["e in -i", "sed -i '1e touch X' a.txt"],
    ["e with a range", "sed '1,$e date' a.txt"],
    ["a lone e", "sed e a.txt"],
    ["s///e", "sed 's/.*/date/e' a.txt"],
    ["s///w", "sed 's/a/b/w out.txt' a.txt"],
    ["w", "sed 'w /tmp/x' a.txt"],
    ["W", "sed -n 'W out.txt' a.txt"],
    ["w after ;", "sed -n 'p;w /tmp/x' a.txt"],
    ["w in a block", "sed -n '/x/{w /tmp/x\n}' a.txt"],
    ["r outside", "sed 'r /srv/secret' a.txt"],
    ["R outside", "sed 'R ~/.ssh/id_rsa' a.txt"],
    ["-e with e", "sed -e p -e '2e id' a.txt"],
    ["--expression with w", "sed --expression='w /tmp/x' a.txt"],
    ["a script file", "sed -f script.sed a.txt"],
    ["an unreadable script", "sed 'k' a.txt"],
    ["through xargs", "echo a.txt | xargs sed -i '1e id'"],
    ["through find -exec", "find . -exec sed -i '1e id' {} ;"],
  ])("%s: a safety ASK no mode clears", (_, command) => {
    const expected = safetyByMode("safety.sed_script", true);
    for (const mode of MODES) {
      const decision = decide("Bash", bash(command), mode);
      expect(decision, `${command} in ${mode}: ${decision.reason}`).toMatchObject(expected[mode]);
    }
  });

  it("no rule clears it, not even the one suggested for a plain sed -i", () => {
    const rules = [allow("Bash", "sed -i:*"), allow("Bash")];
    for (const mode of ["default", "accept_edits"] as const) {
      expect(decide("Bash", bash("sed -i '1e touch X' a.txt"), mode, rules)).toMatchObject({
        behavior: "ask",
        check: "safety.sed_script",
        bypassImmune: true,
        suggestedRules: [],
      });
    }
  });

  it("writing to standard output and reading inside are fine", () => {
    expectReadOnly("sed -n 'w /dev/stdout' a.txt");
    expectReadOnly("sed 'r header.txt' a.txt");
    expectReadOnly("sed 'R ../repo/x' a.txt");
  });
});
