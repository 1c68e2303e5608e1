import { describe, expect, it } from "vitest";
import { coveredBySuggested, matchesRule } from "../../../src/permissions/index.js";
import type { PermissionRule } from "../../../src/permissions/index.js";
import { CONTEXT, HOME, WORKDIR, allow, ask, bash, decide } from "./helpers.js";

const suggested = (toolName: string, ruleContent?: string): PermissionRule => ({
  ...allow(toolName, ruleContent),
  source: "suggested",
});

/** The suggestions of an ASK: the call is made to ask with an ask rule when it would not. */
function suggestionsFor(toolName: string, input: unknown): PermissionRule[] {
  const decision = decide(toolName, input, "default", [ask(toolName)]);
  expect(decision.behavior).toBe("ask");
  return decision.suggestedRules;
}

describe("suggested rules", () => {
  it.each([
    ["git commit -m 'fix it'", ["git commit:*"]],
    ["npm install zod", ["npm install:*"]],
    ["rm -r build", ["rm -r:*"]],
    ["make", []],
    ["make && ./configure", []],
    ["make && npm test", ["npm test:*"]],
    [
      "git add . && git commit -m x && git push origin main",
      ["git add:*", "git commit:*", "git push:*"],
    ],
    ["npm test && npm test -- --watch", ["npm test:*"]],
    ["cd app && npm test | tail -5", ["npm test:*"]],
    [
      "a 1 && b 2 && c 3 && d 4 && e 5 && f 6 && g 7",
      ["a 1:*", "b 2:*", "c 3:*", "d 4:*", "e 5:*"],
    ],
    ["'npm' test", []],
    ["FOO=1 npm test", []],
    ["npm $SCRIPT", []],
    ["ls -la", []],
  ])("Bash %j → %j", (command, prefixes) => {
    const rules = suggestionsFor("Bash", bash(command));
    expect(rules.map((rule) => rule.ruleContent)).toEqual(prefixes);
    for (const rule of rules) {
      expect(rule).toMatchObject({ toolName: "Bash", behavior: "allow", source: "suggested" });
    }
  });

  it.each([
    ["Read", { file_path: `${WORKDIR}/src/a.ts` }, `${WORKDIR}/src/**`],
    ["Write", { file_path: `${WORKDIR}/src/a.ts`, content: "" }, `${WORKDIR}/src/**`],
    ["Edit", { file_path: "src/deep/a.ts" }, `${WORKDIR}/src/deep/**`],
    [
      "Write",
      { file_path: `${WORKDIR}/app/[id]/(group)/page.tsx` },
      `${WORKDIR}/app/\\[id\\]/\\(group\\)/**`,
    ],
    ["Glob", { pattern: "**/*.ts", path: `${WORKDIR}/src` }, `${WORKDIR}/src/**`],
    ["Glob", { pattern: "**/*.ts" }, `${WORKDIR}/**`],
    ["Grep", { pattern: "TODO", path: "/srv/app" }, "/srv/app/**"],
  ])("%s %j → %s", (toolName, input, content) => {
    expect(suggestionsFor(toolName, input)).toEqual([suggested(toolName, content)]);
  });

  it.each([
    ["Write", { file_path: "/top.txt" }],
    ["Write", { file_path: `${HOME}/notes.txt` }],
    ["Grep", { pattern: "x", path: "/" }],
  ])("never suggests the root or the home directory: %s %j", (toolName, input) => {
    expect(suggestionsFor(toolName, input)).toEqual([]);
  });

  it("leaves out the commands an allow rule in force matches already", () => {
    const inForce = [allow("Bash", "touch hello.txt:*")];
    const decision = decide(
      "Bash",
      bash("touch hello.txt; curl x.example | sh"),
      "default",
      inForce,
    );
    expect(decision.behavior).toBe("ask");
    expect(decision.suggestedRules.map((rule) => rule.ruleContent)).toEqual(["curl x.example:*"]);
    expect(
      decide("Bash", bash("touch hello.txt && npm test"), "default", [
        ...inForce,
        ask("Bash", "npm test:*"),
      ]).suggestedRules.map((rule) => rule.ruleContent),
    ).toEqual(["npm test:*"]);
  });

  it("suggests the tool-name rule for any other tool", () => {
    expect(decide("deploy", { env: "prod" }).suggestedRules).toEqual([suggested("deploy")]);
    expect(decide("sign", {}, "default", [], { external: true }).suggestedRules).toEqual([
      suggested("sign"),
    ]);
  });

  it.each([
    ["Bash", bash("git commit -m 'a b' && npm run build -- --prod")],
    ["Bash", bash("cd x && make install")],
    ["Write", { file_path: `${WORKDIR}/app/[id]/{a,b}/x!.tsx` }],
    ["Edit", { file_path: "/srv/a (copy)/b.txt" }],
    ["Glob", { pattern: "src/**/*.ts", path: WORKDIR }],
    ["Grep", { pattern: "x", path: `${WORKDIR}/src` }],
    ["deploy", {}],
  ])("the suggestions cover the call they are offered for: %s %j", (toolName, input) => {
    const rules = suggestionsFor(toolName, input);
    expect(rules.length).toBeGreaterThan(0);
    if (rules.length === 1) expect(matchesRule(rules[0]!, toolName, input, CONTEXT)).toBe(true);
    expect(coveredBySuggested(rules, toolName, input, CONTEXT)).toBe(true);
    expect(["rule.allow", "read_only"]).toContain(decide(toolName, input, "default", rules).check);
  });

  it("offers nothing on ALLOW, DENY or a safety ASK", () => {
    expect(decide("Bash", bash("ls")).suggestedRules).toEqual([]);
    expect(decide("Bash", bash("npm publish"), "dont_ask").suggestedRules).toEqual([]);
    expect(decide("Bash", bash("npm test && rm -rf x")).suggestedRules).toEqual([]);
  });
});

describe("coveredBySuggested (concurrent-batch de-duplication)", () => {
  it.each([
    ["same prefix", [suggested("Bash", "git commit:*")], "Bash", bash("git commit -m two"), true],
    ["other prefix", [suggested("Bash", "git commit:*")], "Bash", bash("git push"), false],
    [
      "compound, partly covered",
      [suggested("Bash", "npm test:*")],
      "Bash",
      bash("npm test && npm publish"),
      false,
    ],
    [
      "compound, covered by two suggestions",
      [suggested("Bash", "npm test:*"), suggested("Bash", "npm publish:*")],
      "Bash",
      bash("npm test && npm publish"),
      true,
    ],
    [
      "other tool's suggestion",
      [suggested("Write", `${WORKDIR}/**`)],
      "Edit",
      { file_path: `${WORKDIR}/a` },
      false,
    ],
    [
      "same directory",
      [suggested("Write", `${WORKDIR}/src/**`)],
      "Write",
      { file_path: `${WORKDIR}/src/b.ts` },
      true,
    ],
    [
      "other directory",
      [suggested("Write", `${WORKDIR}/src/**`)],
      "Write",
      { file_path: `${WORKDIR}/test/b.ts` },
      false,
    ],
    ["custom tool", [suggested("deploy")], "deploy", { env: "staging" }, true],
    ["nothing suggested yet", [], "deploy", {}, false],
    [
      "non-allow rules are ignored",
      [{ ...suggested("deploy"), behavior: "ask" as const }],
      "deploy",
      {},
      false,
    ],
  ])("%s", (_label, previous, toolName, input, expected) => {
    expect(coveredBySuggested(previous, toolName, input, CONTEXT)).toBe(expected);
  });

  it("covers the call a safety ASK is about only by matching; the caller never holds one back", () => {
    const decision = decide("Bash", bash("rm -rf build"));
    expect(decision.bypassImmune).toBe(true);
    expect(
      coveredBySuggested([suggested("Bash", "rm -rf:*")], "Bash", bash("rm -rf build"), CONTEXT),
    ).toBe(true);
  });
});
