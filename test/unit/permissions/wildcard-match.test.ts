import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listDirectoryOf, realPathOf } from "../../../src/agent/real-path.js";
import { expandGlob } from "../../../src/permissions/expand-glob.js";
import { globTooComplex } from "../../../src/permissions/glob-limits.js";
import { matchesRule } from "../../../src/permissions/index.js";
import { ruleProblems } from "../../../src/permissions/rule-limits.js";
import {
  anyChar,
  literal,
  matchesStarParts,
  matchTokens,
  star,
  type WildcardToken,
} from "../../../src/permissions/wildcard-match.js";
import { expectReadOnly } from "./modes.js";

/**
 * Wildcards are matched without backtracking regular expressions, and globs that picomatch would
 * take seconds to match are refused: a model's word (`ls *a*a*a*a*a*b` in a directory holding a
 * long name) or a client's rule must not stall the server's event loop.
 */

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
}
const pick = (next: () => number, alphabet: string, length: number) =>
  Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");

describe("the wildcard matchers agree with regular expressions", () => {
  it("matchTokens: `*`, `?` and literals, 5,000 random patterns and texts", () => {
    const next = random(7);
    for (let i = 0; i < 5_000; i += 1) {
      const pattern = pick(next, "ab*?", Math.floor(next() * 7));
      const text = pick(next, "ab", Math.floor(next() * 9));
      const tokens: WildcardToken[] = [...pattern].map((c) =>
        c === "*" ? star : c === "?" ? anyChar : literal(c),
      );
      const source = [...pattern].map((c) => (c === "*" ? ".*" : c === "?" ? "." : c)).join("");
      expect(matchTokens(tokens, text), `${pattern} ${text}`).toBe(
        new RegExp(`^${source}$`, "s").test(text),
      );
    }
  });

  it("matchesStarParts: `*` and literals, 5,000 random patterns and texts", () => {
    const next = random(11);
    for (let i = 0; i < 5_000; i += 1) {
      const pattern = pick(next, "ab*", Math.floor(next() * 7));
      const text = pick(next, "ab", Math.floor(next() * 9));
      const source = pattern.replaceAll("*", ".*");
      expect(matchesStarParts(pattern.split("*"), text), `${pattern} ${text}`).toBe(
        new RegExp(`^${source}$`, "s").test(text),
      );
    }
  });
});

describe("matching that a regular expression would take minutes over", () => {
  const root = realPathOf(mkdtempSync(path.join(tmpdir(), "parkway-wildcards-")));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const long = "a".repeat(250);

  it("a Bash word with many wildcards, over a directory holding a long name", () => {
    const wd = path.join(root, "wd");
    mkdirSync(wd, { recursive: true });
    writeFileSync(path.join(wd, long), "x");
    writeFileSync(path.join(wd, `${long}b`), "x");
    const word = `${wd}/${"*a".repeat(12)}*b`;
    expect(expandGlob(word, listDirectoryOf, 100)).toEqual([`${wd}/${long}b`]);
    expectReadOnly(`ls ${"*a".repeat(12)}*`, {
      workingDirectories: [wd],
      realPath: realPathOf,
      listDirectory: listDirectoryOf,
    });
  });

  it("a Bash rule with many wildcards, against a long command", () => {
    const rule = {
      toolName: "Bash",
      ruleContent: `${"*a".repeat(12)}*b`,
      behavior: "deny" as const,
      source: "api" as const,
    };
    expect(ruleProblems(rule)).toEqual([]);
    expect(matchesRule(rule, "Bash", { command: `echo ${long}` })).toBe(false);
    expect(matchesRule(rule, "Bash", { command: `echo ${long}b` })).toBe(true);
  });
});

describe("globs too complex to match quickly are refused", () => {
  it.each([
    ["*a*a*b", /3 wildcards \* in the segment "\*a\*a\*b"; at most 2/],
    ["src/**/x/**/*.ts*", /4 wildcards \* and \*\*; at most 3/],
    ["+(a|aa)b", /extglob \(\+\(…\)/],
    ["src/@(a|b).ts", /extglob \(@\(…\)/],
  ])("%s", (glob, why) => {
    expect(globTooComplex(glob)).toMatch(why);
    const problems = ruleProblems({ toolName: "Read", ruleContent: glob });
    expect(problems.map((problem) => problem.field)).toEqual(["rule_content"]);
    expect(problems[0]?.description).toMatch(why);
  });
  it.each([
    "src/**",
    "**/*.test.*",
    "~/.ssh/**",
    "**/secret/**/*.key",
    "\\*a\\*a\\*b*",
    "*.{ts,tsx}",
  ])("%s is fine", (glob) => {
    expect(globTooComplex(glob)).toBeUndefined();
    expect(ruleProblems({ toolName: "Read", ruleContent: glob })).toEqual([]);
  });
  it("a Bash rule's pattern is not a glob: its wildcards are matched linearly", () => {
    expect(ruleProblems({ toolName: "Bash", ruleContent: "docker run * --name * * *" })).toEqual(
      [],
    );
  });
});
