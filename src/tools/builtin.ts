import { z } from "zod";
import { bashTool } from "./bash.js";
import { editTool } from "./edit.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";
import { readTool } from "./read.js";
import type { Tool } from "./tool.js";
import { writeTool } from "./write.js";

/** The built-in tools: Bash, Read, Write, Edit, Glob, Grep. */
export function builtinTools(): Tool[] {
  return [bashTool, readTool, writeTool, editTool, globTool, grepTool];
}

/**
 * The JSON Schema of a tool's input as the model sees it, fit for OpenAI function `parameters`
 * (no `$schema` key): the tool's own `jsonSchema` when it has one (external tools), otherwise derived
 * from `inputSchema` on its input side (fields with defaults are optional), which for the strict
 * built-in schemas is `type: "object"` with `additionalProperties: false`.
 */
export function toolJsonSchema(tool: Tool): Record<string, unknown> {
  const schema =
    tool.jsonSchema !== undefined
      ? { ...tool.jsonSchema }
      : (z.toJSONSchema(tool.inputSchema, { io: "input" }) as Record<string, unknown>);
  delete schema.$schema;
  return schema;
}
