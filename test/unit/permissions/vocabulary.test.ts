import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/index.js";
import {
  PermissionBehavior as PbBehavior,
  PermissionMode as PbMode,
  RuleScope as PbScope,
  RuleSource as PbSource,
} from "../../../src/generated/parkway/v1/permission.js";
import {
  PERMISSION_BEHAVIORS,
  PERMISSION_MODES,
  permissionModeSchema,
  permissionRuleSchema,
  RULE_SCOPES,
  RULE_SOURCES,
} from "../../../src/permissions/index.js";
import {
  behavior,
  permissionMode,
  ruleScope,
  ruleSource,
} from "../../../src/server/mappers/enums.js";
import { ruleSchema } from "../../../src/agent/types.js";

/** The values of a ts-proto enum other than UNSPECIFIED (0) and UNRECOGNIZED (-1). */
function wireValues(e: Record<string, string | number>): number[] {
  return Object.values(e).filter((v): v is number => typeof v === "number" && v > 0);
}

describe("the permission vocabulary, defined once", () => {
  const cases = [
    ["modes", PERMISSION_MODES, permissionMode, PbMode],
    ["behaviours", PERMISSION_BEHAVIORS, behavior, PbBehavior],
    ["rule scopes", RULE_SCOPES, ruleScope, PbScope],
    ["rule sources", RULE_SOURCES, ruleSource, PbSource],
  ] as const;

  for (const [name, words, mapper, wire] of cases) {
    it(`maps every one of the ${name} to the wire and back, and every wire value to one of them`, () => {
      const toWire = (words as readonly string[]).map((w) =>
        (mapper.toPb as (d: string) => number)(w),
      );
      expect(toWire.every((v) => v > 0)).toBe(true);
      expect(new Set(toWire).size).toBe(words.length);
      expect(toWire.map((v) => mapper.fromPb(v))).toEqual([...words]);
      expect([...toWire].sort()).toEqual(wireValues(wire).sort());
    });
  }

  it("accepts every mode in the configuration and in records, and nothing else", () => {
    for (const mode of PERMISSION_MODES) {
      expect(
        parseConfig({ agents: [{ id: "a", permissionMode: mode }] }).agents[0]?.permissionMode,
      ).toBe(mode);
      expect(permissionModeSchema.parse(mode)).toBe(mode);
    }
    expect(() => parseConfig({ agents: [{ id: "a", permissionMode: "yolo" as never }] })).toThrow(
      /permissionMode/,
    );
    expect(permissionModeSchema.safeParse("yolo").success).toBe(false);
  });

  it("validates a stored rule and an engine rule with the same fields", () => {
    const rule = {
      toolName: "Bash",
      ruleContent: "npm test:*",
      behavior: "allow",
      scope: "agent",
      source: "api",
    };
    expect(ruleSchema.parse({ ...rule, id: "r1" })).toMatchObject(rule);
    expect(permissionRuleSchema.parse(rule)).toMatchObject(rule);
    for (const bad of [{ behavior: "maybe" }, { scope: "world" }, { source: "rumour" }]) {
      expect(ruleSchema.safeParse({ ...rule, ...bad }).success).toBe(false);
      expect(permissionRuleSchema.safeParse({ ...rule, ...bad }).success).toBe(false);
    }
  });
});
