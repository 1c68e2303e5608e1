import { describe, expect, it } from "vitest";
import { matchesRule, parseRule } from "../../../src/permissions/index.js";
import { allow, ask, decide, deny } from "./helpers.js";

const WRITE = "mcp__fs__write_file";
const input = { path: "/work/repo/a.txt", content: "x" };

describe("rules naming MCP tools", () => {
  it("parses mcp__<server>__<tool> and mcp__<server> as tool-name rules", () => {
    expect(parseRule(WRITE)).toEqual({ toolName: WRITE, behavior: "allow" });
    expect(parseRule("mcp__fs", "deny")).toEqual({ toolName: "mcp__fs", behavior: "deny" });
  });

  it.each([
    [allow(WRITE), WRITE, true],
    [allow(WRITE), "mcp__fs__read_file", false],
    [allow("mcp__fs"), WRITE, true],
    [allow("mcp__fs"), "mcp__fs__read_file", true],
    [allow("mcp__fs"), "mcp__fs2__write_file", false],
    [allow("mcp__fs"), "mcp__fsx__write_file", false],
    [allow("mcp__my-fs_1"), "mcp__my-fs_1__write_file", true],
    [allow("mcp__f"), "mcp__fs__write_file", false],
    [deny("mcp__fs"), WRITE, true],
    [ask("mcp__fs"), WRITE, true],
    [deny("mcp__fs"), "Write", false],
    // Neither a server rule with content nor a rule cut inside a name covers a tool.
    [allow("mcp__fs", "x"), WRITE, false],
    [allow("mcp"), WRITE, false],
    [allow("mcp__fs__write"), WRITE, false],
    [allow("mcp__fs__"), WRITE, false],
    // `__` separates server and tool: mcp__a__b names tool b of server a, not a server.
    [allow("mcp__a__b"), "mcp__a__b__c", false],
  ])("%j on %s → %s", (rule, toolName, expected) => {
    expect(matchesRule(rule, toolName, input)).toBe(expected);
  });

  it("decides MCP calls by those rules, deny first, in every mode", () => {
    expect(decide(WRITE, input, "default").behavior).toBe("ask");
    expect(decide(WRITE, input, "default", [allow("mcp__fs")]).behavior).toBe("allow");
    expect(decide(WRITE, input, "default", [allow("mcp__fs")]).reason).toBe(
      "allowed by rule mcp__fs",
    );
    expect(decide(WRITE, input, "bypass", [deny("mcp__fs")]).reason).toBe("denied by rule mcp__fs");
    expect(decide(WRITE, input, "default", [allow("mcp__fs"), deny(WRITE)]).behavior).toBe("deny");
    expect(decide(WRITE, input, "bypass", [ask("mcp__fs")]).behavior).toBe("ask");
    // A read-only MCP call (the tool says so) is allowed unless a rule says otherwise.
    const read = { toolReadOnly: true };
    expect(decide("mcp__fs__read_file", {}, "default", [], read).behavior).toBe("allow");
    expect(decide("mcp__fs__read_file", {}, "default", [ask("mcp__fs")], read).behavior).toBe(
      "ask",
    );
  });
});
