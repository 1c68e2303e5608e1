import type { Tool as McpToolInfo } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { jsonSchemaInput, schemaError } from "../external-tool.js";
import { cutUtf8 } from "../output-cap.js";
import type { Tool, ToolResult } from "../tool.js";
import type { McpConnection } from "./mcp-connection.js";
import { McpUnavailableError } from "./mcp-errors.js";
import { mapCallToolResult } from "./mcp-result.js";

/** The Parkway name of a server's tool: `mcp__<server>__<tool>`. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

/** The names a model endpoint accepts for a tool (OpenAI's rule). */
const MODEL_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Why a listed tool cannot be offered to the model, or undefined when it can. */
export function mcpToolProblem(server: string, info: McpToolInfo): string | undefined {
  const name = mcpToolName(server, info.name);
  if (!MODEL_TOOL_NAME.test(name)) {
    return `its name ${name} is not 1 to 64 letters, digits, _ and -, as model endpoints require`;
  }
  const schemaProblem = schemaError(inputSchemaOf(info));
  return schemaProblem === undefined ? undefined : `its inputSchema: ${schemaProblem}`;
}

/**
 * The schema the input is checked with: the server's, without `$schema` (the draft it names may be
 * one the validator does not load; the keywords are what matters) and `$id` (the validator holds
 * one schema per id, and two servers, or two agents of one server, may use the same).
 */
function inputSchemaOf(info: McpToolInfo): Record<string, unknown> {
  const schema: Record<string, unknown> = { ...info.inputSchema };
  delete schema.$schema;
  delete schema.$id;
  return schema;
}

/**
 * A tool of an MCP server as a Parkway tool, as the server lists it now: `listed` is its latest
 * listing (undefined once the server no longer offers it), read at each use, so a server that
 * lists the tool again with other annotations or another schema (after a restart, or after
 * `notifications/tools/list_changed`) is judged by what it says now. Its input is checked against
 * the server's JSON Schema before the call; it only reads when the server says so (`readOnlyHint`
 * and not `destructiveHint`), and only then runs beside other calls. The call is cancelled when the
 * context's signal aborts. A server that cannot be reached gives an error result naming it.
 */
export function mcpTool(
  connection: McpConnection,
  info: McpToolInfo,
  listed: () => McpToolInfo | undefined = () => info,
): Tool<Record<string, unknown>> {
  const server = connection.name;
  const validators = new WeakMap<McpToolInfo, z.ZodType<Record<string, unknown>>>();
  const validatorOf = (current: McpToolInfo) => {
    let validator = validators.get(current);
    if (!validator) {
      validator = jsonSchemaInput(inputSchemaOf(current));
      validators.set(current, validator);
    }
    return validator;
  };
  const readOnly = () => {
    const annotations = listed()?.annotations;
    return annotations?.readOnlyHint === true && annotations.destructiveHint !== true;
  };
  const fail = (text: string, maxBytes: number): ToolResult => ({
    state: "error",
    output: cutUtf8(text, maxBytes),
  });
  return {
    name: mcpToolName(server, info.name),
    description: info.description ?? info.title ?? "",
    // Checked against the schema the server lists now; a tool it no longer lists takes no input.
    inputSchema: z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
      const current = listed();
      if (!current) {
        ctx.addIssue({
          code: "custom",
          message: `MCP server ${server} no longer offers this tool`,
        });
        return;
      }
      const checked = validatorOf(current).safeParse(value);
      if (!checked.success)
        for (const issue of checked.error.issues) {
          ctx.addIssue({ code: "custom", message: issue.message });
        }
    }),
    jsonSchema: info.inputSchema,
    isReadOnly: readOnly,
    isConcurrencySafe: readOnly,
    async run(input, ctx) {
      if (!listed()) {
        return fail(
          `MCP server ${server} no longer offers the tool ${info.name}`,
          ctx.maxOutputBytes,
        );
      }
      try {
        const ask = ctx.ask;
        const result = await connection.call(
          info.name,
          input,
          ctx.signal,
          ask && ((question, signal) => ask(question, AbortSignal.any([signal, ctx.signal]))),
        );
        return mapCallToolResult(result, ctx.maxOutputBytes);
      } catch (err) {
        if (ctx.signal.aborted) return fail("", ctx.maxOutputBytes);
        const reason = err instanceof Error ? err.message : String(err);
        return fail(
          err instanceof McpUnavailableError
            ? `MCP server ${server} is not available: ${reason}`
            : `MCP server ${server} failed the call of ${info.name}: ${reason}`,
          ctx.maxOutputBytes,
        );
      }
    },
  };
}
