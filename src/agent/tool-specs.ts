import type { ModelToolSpec } from "../model/model.js";
import { toolJsonSchema } from "../tools/builtin.js";
import type { Tool } from "../tools/tool.js";

const cache = new WeakMap<Tool, ModelToolSpec>();

/** The tools offered to the model, each converted to JSON Schema once. */
export function toolSpecs(tools: ReadonlyMap<string, Tool>): ModelToolSpec[] {
  return [...tools.values()].map((tool) => {
    let spec = cache.get(tool);
    if (!spec) {
      spec = { name: tool.name, description: tool.description, inputSchema: toolJsonSchema(tool) };
      cache.set(tool, spec);
    }
    return spec;
  });
}
