import type { z } from "zod";
import type { Tool, ToolContext, ToolResult } from "./tool.js";

/** What an embedding application gives to define its own tool. */
export interface ToolDefinition<S extends z.ZodType> {
  name: string;
  description: string;
  /** The input schema; published to the model as JSON Schema and checked before `run`. */
  input: S;
  /** True when the tool only reads; read-only calls need no confirmation. Default false. */
  readOnly?: boolean | ((input: z.infer<S>) => boolean);
  /** True when calls may run alongside other concurrency-safe calls. Default: same as readOnly. */
  concurrencySafe?: boolean;
  /**
   * Runs the tool. Return a string (success) or a full result; a thrown error becomes an error
   * result the model sees. Stop promptly when `ctx.signal` aborts.
   */
  run(input: z.infer<S>, ctx: ToolContext): Promise<string | ToolResult>;
}

/** Turns a zod schema and an async function into a tool the agents can call. */
export function defineTool<S extends z.ZodType>(def: ToolDefinition<S>): Tool<z.infer<S>> {
  const readOnly = (input: z.infer<S>) =>
    typeof def.readOnly === "function" ? def.readOnly(input) : def.readOnly === true;
  return {
    name: def.name,
    description: def.description,
    inputSchema: def.input as z.ZodType<z.infer<S>>,
    isReadOnly: readOnly,
    isConcurrencySafe: (input) => def.concurrencySafe ?? readOnly(input),
    async run(input, ctx) {
      try {
        const result = await def.run(input, ctx);
        return typeof result === "string" ? { state: "success", output: result } : result;
      } catch (err) {
        return { state: "error", output: (err as Error).message || String(err) };
      }
    },
  };
}
