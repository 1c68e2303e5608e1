import { describe, expect, it } from "vitest";
import {
  formatRule,
  parseRule,
  permissionModeSchema,
  permissionRuleSchema,
  sameRule,
} from "../../../src/permissions/index.js";
import type { PermissionRule } from "../../../src/permissions/index.js";
import { allow, ask, deny } from "./helpers.js";

describe("formatRule / parseRule", () => {
  it.each([
    ["Bash(npm test:*)", allow("Bash", "npm test:*")],
    ["Bash(git *)", allow("Bash", "git *")],
    ["Bash(echo \\*)", allow("Bash", "echo \\*")],
    ["Write", allow("Write")],
    ["Write(/repo/src/**)", allow("Write", "/repo/src/**")],
    ["Edit(/repo/app/\\(group\\)/**)", allow("Edit", "/repo/app/\\(group\\)/**")],
    ["Bash(echo (a) b)", allow("Bash", "echo (a) b")],
    ["Bash(node -e 'f()')", allow("Bash", "node -e 'f()'")],
    ["mcp__github__create_issue", allow("mcp__github__create_issue")],
  ])("%s round-trips", (text, rule) => {
    expect(parseRule(text)).toEqual(rule);
    expect(formatRule(rule)).toBe(text);
    const parsed = parseRule(text);
    expect(parsed && formatRule(parsed)).toBe(text);
  });

  it("keeps the behavior it is given", () => {
    expect(parseRule("Bash(rm:*)", "deny")).toEqual(deny("Bash", "rm:*"));
    expect(parseRule("  Bash  ", "ask")).toEqual(ask("Bash"));
  });

  it("reads empty content as the tool-name rule", () => {
    expect(parseRule("Bash()")).toEqual(allow("Bash"));
    expect(formatRule({ toolName: "Bash", ruleContent: "" })).toBe("Bash");
  });

  it.each([[""], ["   "], ["Bash(npm"], ["(npm test)"], ["Ba sh(x)"], ["Bash)x("], ["Bash(x) y"]])(
    "rejects %j",
    (text) => {
      expect(parseRule(text)).toBeUndefined();
    },
  );
});

describe("sameRule", () => {
  it.each([
    [allow("Bash", "ls:*"), allow("Bash", "ls:*"), true],
    [allow("Bash", "ls:*"), { ...allow("Bash", "ls:*"), source: "suggested" as const }, true],
    [allow("Bash", "ls:*"), { ...allow("Bash", "ls:*"), scope: "tenant" as const }, true],
    [allow("Bash"), { toolName: "Bash", ruleContent: "", behavior: "allow" as const }, true],
    [allow("Bash", "ls:*"), deny("Bash", "ls:*"), false],
    [allow("Bash", "ls:*"), allow("Bash", "ls"), false],
    [allow("Bash", "ls:*"), allow("Shell", "ls:*"), false],
    [allow("Bash"), allow("Bash", "ls:*"), false],
  ] satisfies [PermissionRule, PermissionRule, boolean][])("%j vs %j → %s", (a, b, expected) => {
    expect(sameRule(a, b)).toBe(expected);
    expect(sameRule(b, a)).toBe(expected);
  });
});

describe("schemas", () => {
  it("validates rules and keeps storage fields", () => {
    const rule = { toolName: "Bash", ruleContent: "ls:*", behavior: "allow", id: "r1" };
    expect(permissionRuleSchema.parse(rule)).toEqual(rule);
    expect(permissionRuleSchema.safeParse({ toolName: "Bash", behavior: "maybe" }).success).toBe(
      false,
    );
    expect(permissionRuleSchema.safeParse({ toolName: "", behavior: "allow" }).success).toBe(false);
  });

  it("validates modes", () => {
    expect(permissionModeSchema.parse("accept_edits")).toBe("accept_edits");
    expect(permissionModeSchema.safeParse("yolo").success).toBe(false);
  });
});
