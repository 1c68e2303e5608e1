import { describe, expect, it } from "vitest";
import { createLineMatcher } from "../../../src/tools/line-matcher.js";

/** The per-line answer, computed the obvious way. */
function naive(pattern: string, text: string, ignoreCase = false): number[] {
  const re = new RegExp(pattern, ignoreCase ? "i" : "");
  const lines = text === "" ? [] : text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines.flatMap((line, i) => (re.test(line) ? [i + 1] : []));
}

const texts = [
  "",
  "\n",
  "a",
  "a\n",
  "a\n\n",
  "x\nxz\n",
  "foo bar\n\nbaz foo\nqux",
  "  indented\n\tTAB\nend$\n",
  "a\nab\nabc\n\n",
];
const patterns = [
  "a",
  "^$",
  "^",
  "$",
  "x[^y]*z",
  "\\s",
  "\\n",
  "foo|qux",
  "b*",
  "^\\s+\\w",
  "(?<!x)z",
  "o(?=o)",
  "^a.c$",
  "[A-Z]",
];

describe("createLineMatcher", () => {
  it.each(patterns)("line mode agrees with a per-line test for /%s/", (pattern) => {
    const matcher = createLineMatcher(pattern, { ignoreCase: false, multiline: false });
    for (const text of texts) {
      expect(matcher.matchLines(text, false), JSON.stringify(text)).toEqual(naive(pattern, text));
      expect(matcher.matchLines(text, true)).toEqual(naive(pattern, text).slice(0, 1));
    }
  });

  it("ignores case when asked", () => {
    const matcher = createLineMatcher("tab", { ignoreCase: true, multiline: false });
    expect(matcher.matchLines("  indented\n\tTAB\n", false)).toEqual([2]);
  });

  it("counts every line a multiline match spans", () => {
    const matcher = createLineMatcher("start.*?end", { ignoreCase: false, multiline: true });
    expect(matcher.matchLines("x\nstart\nmiddle\nend\ny\nstart end\n", false)).toEqual([
      2, 3, 4, 6,
    ]);
    expect(matcher.matchLines("x\nstart\nmiddle\nend\n", true)).toEqual([2, 3, 4]);
    const empty = createLineMatcher("^$", { ignoreCase: false, multiline: true });
    expect(empty.matchLines("a\n\nb\n", false)).toEqual([2]);
    expect(empty.matchLines("", false)).toEqual([]);
  });

  it("throws on an invalid pattern", () => {
    expect(() => createLineMatcher("(", { ignoreCase: false, multiline: false })).toThrow(
      SyntaxError,
    );
  });
});
