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
 * The JSON Schema of a tool's input as the model sees it (the input side: fields with defaults are
 * optional), fit for OpenAI function `parameters`: `type: "object"`, no `$schema` key, and
 * `additionalProperties: false` for the strict schemas.
 */
export function toolJsonSchema(tool: Tool): Record<string, unknown> {
  const schema = z.toJSONSchema(tool.inputSchema, { io: "input" }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}
