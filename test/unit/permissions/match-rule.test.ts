import { describe, expect, it } from "vitest";
import { matchesRule } from "../../../src/permissions/index.js";
import type { PermissionRule } from "../../../src/permissions/index.js";
import { matchesBashPattern } from "../../../src/permissions/match-rule.js";
import { CONTEXT, HOME, WORKDIR, allow, ask, bash, decide, deny } from "./helpers.js";

describe("Bash patterns", () => {
  it.each([
    // `X:*`: equal to X, or X followed by a space.
    ["npm test:*", "npm test", true],
    ["npm test:*", "npm test --watch", true],
    ["npm test:*", "npm testing", false],
    ["npm test:*", "xnpm test", false],
    ["npm   test:*", "npm test -- a", true],
    ["git:*", "git", true],
    // An unescaped `*` is a full-match wildcard; a trailing ` *` also matches nothing.
    ["git *", "git", true],
    ["git *", "git status", true],
    ["git *", "gitk", false],
    ["git *", "xgit status", false],
    ["git * --force", "git push --force", true],
    ["git * --force", "git push", false],
    ["npm run *:dev", "npm run web:dev", true],
    ["*", "anything at all", true],
    ["ls *.txt", "ls a.txt", true],
    ["ls *.txt", "ls a.txt b.md", false],
    // Otherwise a substring; `\*` is a literal star.
    ["push", "git push origin main", true],
    ["push", "git pull", false],
    ["echo \\*", "echo * here", true],
    ["echo \\*", "echo here", false],
    ["a.b", "axb", false],
  ])("%j on %j → %s", (pattern, text, expected) => {
    expect(matchesBashPattern(pattern, text)).toBe(expected);
  });
});

type MatchRow = [string, PermissionRule, string, unknown, boolean];

const rows: MatchRow[] = [
  // Compound commands: allow must cover every part that is not read-only; deny/ask any part.
  ["allow, one part", allow("Bash", "npm test:*"), "Bash", bash("npm test"), true],
  [
    "allow, every part",
    allow("Bash", "npm test:*"),
    "Bash",
    bash("npm test && npm test -- a"),
    true,
  ],
  [
    "allow, one part unmatched",
    allow("Bash", "npm test:*"),
    "Bash",
    bash("npm test && rm -rf x"),
    false,
  ],
  ["allow, pipe part unmatched", allow("Bash", "npm test:*"), "Bash", bash("npm test | sh"), false],
  [
    "allow, semicolon part unmatched",
    allow("Bash", "npm test:*"),
    "Bash",
    bash("npm test; curl x"),
    false,
  ],
  [
    "allow, read-only parts need no rule",
    allow("Bash", "npm test:*"),
    "Bash",
    bash("cd app && npm test | tail -5"),
    true,
  ],
  ["allow, nothing matched", allow("Bash", "npm test:*"), "Bash", bash("ls"), false],
  ["allow, newline splits", allow("Bash", "npm test:*"), "Bash", bash("npm test\nrm x"), false],
  [
    "allow, quoted prefix is not the program",
    allow("Bash", "git commit:*"),
    "Bash",
    bash("git commit -m 'a && rm -rf x'"),
    true,
  ],
  ["deny, any part", deny("Bash", "rm:*"), "Bash", bash("npm test && rm x"), true],
  ["deny, quoted program", deny("Bash", "rm:*"), "Bash", bash('"rm" x'), true],
  ["deny, behind sudo", deny("Bash", "rm:*"), "Bash", bash("sudo rm x"), true],
  ["deny, behind an assignment", deny("Bash", "rm:*"), "Bash", bash("A=1 rm x"), true],
  ["deny, behind xargs", deny("Bash", "rm:*"), "Bash", bash("ls | xargs rm"), true],
  ["deny, substring across parts", deny("Bash", "curl"), "Bash", bash("ls && curl x | sh"), true],
  ["deny, no part", deny("Bash", "rm:*"), "Bash", bash("npm test && ls"), false],
  ["ask, any part", ask("Bash", "git push:*"), "Bash", bash("git add . && git push"), true],
  ["tool-name rule", allow("Bash"), "Bash", bash("anything && at all"), true],
  ["other tool's rule", allow("Shell", "ls:*"), "Bash", bash("ls"), false],
  // Read / Write / Edit: a glob on file_path, dot files matched.
  [
    "Read glob",
    allow("Read", "/work/repo/src/**"),
    "Read",
    { file_path: "/work/repo/src/a/b.ts" },
    true,
  ],
  [
    "Read glob, dot file",
    allow("Read", "/work/repo/**"),
    "Read",
    { file_path: "/work/repo/.env" },
    true,
  ],
  [
    "Read glob, outside",
    allow("Read", "/work/repo/src/**"),
    "Read",
    { file_path: "/work/repo/test/a.ts" },
    false,
  ],
  [
    "Read glob, .. folded",
    allow("Read", "/work/repo/**"),
    "Read",
    { file_path: "/work/repo/../secret" },
    false,
  ],
  [
    "Write single star",
    allow("Write", "/work/repo/src/*.ts"),
    "Write",
    { file_path: "/work/repo/src/a.ts" },
    true,
  ],
  [
    "Write single star, nested",
    allow("Write", "/work/repo/src/*.ts"),
    "Write",
    { file_path: "/work/repo/src/x/a.ts" },
    false,
  ],
  [
    "Edit name pattern",
    deny("Edit", "*.lock"),
    "Edit",
    { file_path: "/work/repo/deep/yarn.lock" },
    true,
  ],
  [
    "Edit name pattern, dot file",
    deny("Edit", ".env*"),
    "Edit",
    { file_path: "/work/repo/.env.local" },
    true,
  ],
  [
    "Edit directory name",
    deny("Edit", "node_modules"),
    "Edit",
    { file_path: "/work/repo/node_modules/a/b.js" },
    true,
  ],
  [
    "relative glob anchored at the working directory",
    allow("Edit", "src/**"),
    "Edit",
    { file_path: "/work/repo/src/a.ts" },
    true,
  ],
  [
    "relative glob, elsewhere",
    allow("Edit", "src/**"),
    "Edit",
    { file_path: "/other/src/a.ts" },
    false,
  ],
  [
    "relative file_path",
    allow("Edit", "/work/repo/src/**"),
    "Edit",
    { file_path: "src/a.ts" },
    true,
  ],
  ["home glob", allow("Write", "~/notes/**"), "Write", { file_path: `${HOME}/notes/a.md` }, true],
  [
    "home file_path",
    allow("Write", `${HOME}/notes/**`),
    "Write",
    { file_path: "~/notes/a.md" },
    true,
  ],
  [
    "braces",
    allow("Read", "/work/repo/{src,test}/**"),
    "Read",
    { file_path: "/work/repo/test/a.ts" },
    true,
  ],
  [
    "Read rule does not apply to Write",
    allow("Read", "/work/repo/**"),
    "Write",
    { file_path: "/work/repo/a" },
    false,
  ],
  // Glob: path, then the pattern under it (allow: both; deny/ask: either).
  [
    "Glob allow, path and pattern",
    allow("Glob", "/work/repo/**"),
    "Glob",
    { pattern: "src/**/*.ts", path: "/work/repo" },
    true,
  ],
  [
    "Glob allow, default path",
    allow("Glob", "/work/repo/**"),
    "Glob",
    { pattern: "**/*.ts" },
    true,
  ],
  [
    "Glob allow, pattern escapes",
    allow("Glob", "/work/repo/**"),
    "Glob",
    { pattern: "../**", path: "/work/repo" },
    false,
  ],
  [
    "Glob deny, path",
    deny("Glob", "/secret/**"),
    "Glob",
    { pattern: "*.key", path: "/secret" },
    true,
  ],
  [
    "Glob deny, absolute pattern",
    deny("Glob", "/secret/**"),
    "Glob",
    { pattern: "/secret/**/*.key" },
    true,
  ],
  [
    "Glob deny, neither",
    deny("Glob", "/secret/**"),
    "Glob",
    { pattern: "*.ts", path: "/work/repo" },
    false,
  ],
  // Grep: path.
  [
    "Grep path",
    allow("Grep", "/work/repo/**"),
    "Grep",
    { pattern: "x", path: "/work/repo/src" },
    true,
  ],
  ["Grep default path", allow("Grep", "/work/repo/**"), "Grep", { pattern: "x" }, true],
  [
    "Grep path outside",
    deny("Grep", "/work/repo/**"),
    "Grep",
    { pattern: "x", path: "/etc" },
    false,
  ],
  // Other tools: tool-name rules only.
  ["custom, tool-name", allow("deploy"), "deploy", { env: "prod" }, true],
  ["custom, content", allow("deploy", "prod"), "deploy", { env: "prod" }, false],
  ["custom, empty content", allow("deploy", ""), "deploy", {}, true],
  ["custom, other tool", allow("build"), "deploy", {}, false],
  ["invalid input, content rule", deny("Bash", "rm:*"), "Bash", { cmd: "rm x" }, false],
  ["invalid input, tool-name rule", deny("Bash"), "Bash", { cmd: "rm x" }, true],
];

describe("matchesRule", () => {
  it.each(rows)("%s", (_label, rule, toolName, input, expected) => {
    expect(matchesRule(rule, toolName, input, CONTEXT)).toBe(expected);
  });

  it("agrees with evaluate's deny step", () => {
    for (const [, rule, toolName, input, expected] of rows) {
      if (rule.behavior !== "deny") continue;
      expect(decide(toolName, input, "bypass", [rule]).check === "rule.deny").toBe(expected);
    }
  });

  it("needs the working directories for relative globs", () => {
    expect(matchesRule(allow("Edit", "src/**"), "Edit", { file_path: `${WORKDIR}/src/a.ts` })).toBe(
      false,
    );
  });
});

describe("directory changes and program paths", () => {
  const npmTest = allow("Bash", "npm test:*");
  it.each([
    ["cd app && npm test", "allow", "rule.allow"],
    ["cd /work/repo/app && npm test", "allow", "rule.allow"],
    ["cd /tmp/evil && npm test", "ask", "mode.default"],
    ["cd .. && npm test", "ask", "mode.default"],
    ["cd && npm test", "ask", "mode.default"],
    ["pushd app && npm test && popd", "ask", "mode.default"],
  ])("%s with Bash(npm test:*) → %s", (command, behavior, check) => {
    expect(decide("Bash", bash(command), "default", [npmTest])).toMatchObject({ behavior, check });
  });

  it.each([
    ["/bin/rm x", true],
    ["find . -name '*.o' -exec rm {} +", true],
    ["/usr/bin/sudo /bin/rm x", true],
    ["./rmx", false],
  ])("deny Bash(rm:*) on %j → %s", (command, expected) => {
    expect(matchesRule(deny("Bash", "rm:*"), "Bash", bash(command), CONTEXT)).toBe(expected);
  });
});
