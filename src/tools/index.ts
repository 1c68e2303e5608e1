export type { Tool, ToolContext, ToolResult } from "./tool.js";
export { builtinTools, toolJsonSchema } from "./builtin.js";
export {
  bashTool,
  bashInputSchema,
  createBashTool,
  type BashInput,
  type BashOptions,
} from "./bash.js";
export { readTool, readInputSchema, type ReadInput } from "./read.js";
export { writeTool, writeInputSchema, type WriteInput } from "./write.js";
export { editTool, editInputSchema, type EditInput } from "./edit.js";
export { globTool, globInputSchema, type GlobInput } from "./glob.js";
export {
  grepTool,
  grepInputSchema,
  createGrepTool,
  type GrepInput,
  type GrepOptions,
} from "./grep.js";
export { isInside, resolveInside, type Resolved } from "./paths.js";
