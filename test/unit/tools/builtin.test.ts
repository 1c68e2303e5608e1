import { describe, expect, it } from "vitest";
import { builtinTools, toolJsonSchema } from "../../../src/tools/index.js";

const expected: Record<string, { properties: string[]; required: string[] }> = {
  Bash: { properties: ["command", "description", "timeout"], required: ["command"] },
  Read: { properties: ["file_path", "offset", "limit"], required: ["file_path"] },
  Write: { properties: ["file_path", "content"], required: ["file_path", "content"] },
  Edit: {
    properties: ["file_path", "old_string", "new_string", "replace_all"],
    required: ["file_path", "old_string", "new_string"],
  },
  Glob: { properties: ["pattern", "path"], required: ["pattern"] },
  Grep: {
    properties: [
      "pattern",
      "path",
      "glob",
      "output_mode",
      "-A",
      "-B",
      "-C",
      "-i",
      "multiline",
      "head_limit",
    ],
    required: ["pattern"],
  },
};

describe("builtinTools", () => {
  it("returns the six tools with their read-only and concurrency flags", () => {
    const tools = builtinTools();
    expect(tools.map((t) => t.name)).toEqual(["Bash", "Read", "Write", "Edit", "Glob", "Grep"]);
    const readOnly = Object.fromEntries(
      tools.map((t) => [t.name, [t.isReadOnly({}), t.isConcurrencySafe({})]]),
    );
    expect(readOnly).toEqual({
      Bash: [false, false],
      Read: [true, true],
      Write: [false, false],
      Edit: [false, false],
      Glob: [true, true],
      Grep: [true, true],
    });
    for (const tool of tools) expect(tool.description.length).toBeGreaterThan(20);
  });
});

describe("toolJsonSchema", () => {
  it.each(Object.entries(expected))(
    "publishes %s's input as a strict object schema with described properties",
    (name, { properties, required }) => {
      const tool = builtinTools().find((t) => t.name === name)!;
      const schema = toolJsonSchema(tool);
      expect(schema.$schema).toBeUndefined();
      expect(schema.type).toBe("object");
      expect(schema.additionalProperties).toBe(false);
      expect(schema.required).toEqual(required);
      const props = schema.properties as Record<string, { description?: string }>;
      expect(Object.keys(props)).toEqual(properties);
      for (const [key, prop] of Object.entries(props)) {
        expect(prop.description, `${name}.${key}`).toMatch(/\w/);
      }
      expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
    },
  );

  it("rejects unknown keys, missing required keys and wrong types for every tool", () => {
    for (const tool of builtinTools()) {
      const s = tool.inputSchema;
      expect(s.safeParse({}).success, tool.name).toBe(false);
      expect(s.safeParse(null).success, tool.name).toBe(false);
      expect(s.safeParse({ unexpected: true }).success, tool.name).toBe(false);
    }
  });
});

describe("toolJsonSchema of a tool with its own JSON Schema", () => {
  it("publishes that schema, without $schema, leaving the tool's object untouched", () => {
    const jsonSchema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { q: { type: "string" } },
    };
    const [bash] = builtinTools();
    const schema = toolJsonSchema({ ...bash!, jsonSchema });
    expect(schema).toEqual({ type: "object", properties: { q: { type: "string" } } });
    expect(jsonSchema.$schema).toBeDefined();
  });
});
