import { describe, expect, it } from "vitest";
import { analyzeBash } from "../../../src/permissions/bash-analysis.js";
import { parseShell } from "../../../src/permissions/parse-shell.js";
import { CONTEXT, bash, decide } from "./helpers.js";

const readOnly = (command: string): boolean => analyzeBash(parseShell(command), CONTEXT).readOnly;

describe("read-only Bash", () => {
  it.each([
    "ls",
    "ls -la src",
    "cat package.json",
    "head -n 20 a.txt",
    "tail -f log.txt",
    "grep -rn TODO src",
    "egrep 'a|b' x",
    "rg --type ts useState",
    "find . -name '*.ts' -not -path './node_modules/*'",
    "wc -l src/*.ts",
    "pwd",
    "echo hello",
    "printf '%s\\n' a b",
    "git status",
    "git log --oneline -20",
    "git diff HEAD~1 -- src",
    "git show HEAD:package.json",
    "git --no-pager log",
    "git branch",
    "git branch -a",
    "git remote -v",
    "git config --get user.name",
    "git stash list",
    "ls | grep x",
    "cat a.txt | sort | uniq -c | sort -rn | head",
    "ls 2>/dev/null",
    "ls > /dev/null 2>&1",
    "grep x a 2>&1 | wc -l",
    "cd src && ls",
    "git status; git log -1",
    "which node || echo missing",
    "sort < input.txt",
    "diff a.txt b.txt",
    "jq .name package.json",
    "time ls",
    "! grep -q x a.txt",
    "command -v node",
    "stat -c %s a.txt",
    "sha256sum a.tgz",
    "sed -n p a.txt",
  ])("%s is read-only", (command) => {
    expect(readOnly(command)).toBe(true);
    expect(decide("Bash", bash(command), "explore")).toMatchObject({
      behavior: "allow",
      check: "read_only",
    });
  });

  it.each([
    ["tee out.txt", "tee writes files (agentscope #2605)"],
    ["ls | tee out.txt", "tee in a pipeline"],
    ["git status | tee -a log", "tee -a"],
    ["ls > out.txt", "output redirection"],
    ["ls >> out.txt", "appending redirection"],
    ["ls &> out.txt", "both streams to a file"],
    ["ls 2> err.txt", "stderr to a file"],
    ["ls >| out.txt", "clobbering redirection"],
    ["echo x | cat > f", "redirection at the end of a pipeline"],
    ["find . -delete", "find -delete"],
    ["find . -exec cat {} \\;", "find -exec"],
    ["find . -fprint out", "find -fprint"],
    ["git push", "git push"],
    ["git commit -m x", "git commit"],
    ["git branch -D old", "git branch -D"],
    ["git stash", "git stash pushes"],
    ["git tag v1", "git tag creates"],
    ["git -c core.pager=evil log", "git -c runs configured programs"],
    ["git log --output=out.txt", "git log --output"],
    ["git config user.name x", "git config sets"],
    ["sort -o out.txt in.txt", "sort -o"],
    ["sort -ro out.txt in.txt", "sort -o combined"],
    ["uniq in.txt out.txt", "uniq writes its second operand"],
    ["rg --pre ./script pattern", "rg --pre runs a program"],
    ["sed -n 'w out' a.txt", "sed can write with w"],
    ["find . -type f | xargs grep -l TODO", "xargs builds its command from its input"],
    ["awk '{print}' a.txt", "awk can run programs"],
    ["FOO=1 ls", "assignment"],
    ["PAGER=evil git log", "assignment of a pager"],
    ["npm test", "unknown program"],
    ["/bin/ls", "program by path"],
    ["sudo ls", "sudo"],
    ["env FOO=1 ls", "env with arguments"],
    ["echo $(rm -rf x)", "injection"],
    ["ls && rm x", "one part writes"],
    ["constructor", "prototype name"],
    ["toString", "prototype name"],
    ["xargs", "bare xargs"],
    ["date -s 2020-01-01", "date -s"],
    ["", "empty command"],
  ])("%s is not read-only (%s)", (command) => {
    expect(readOnly(command)).toBe(false);
    expect(decide("Bash", bash(command)).check).not.toBe("read_only");
  });
});
