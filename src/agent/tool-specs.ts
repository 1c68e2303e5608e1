import { z } from "zod";
import type { ModelToolSpec } from "../model/model.js";
import type { Tool } from "../tools/tool.js";

const cache = new WeakMap<Tool, ModelToolSpec>();

/** The JSON Schema of a tool's input, as the model sees it (no `$schema` key). */
export function inputJsonSchema(tool: Tool): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.inputSchema, {
    io: "input",
    unrepresentable: "any",
  }) as Record<string, unknown>;
  return schema;
}

/** The tools offered to the model, each converted once. */
export function toolSpecs(tools: ReadonlyMap<string, Tool>): ModelToolSpec[] {
  return [...tools.values()].map((tool) => {
    let spec = cache.get(tool);
    if (!spec) {
      spec = { name: tool.name, description: tool.description, inputSchema: inputJsonSchema(tool) };
      cache.set(tool, spec);
    }
    return spec;
  });
}
