import { z } from "zod";
import { httpHeaders } from "./http-headers.js";

/**
 * Why `name` cannot name an MCP server, or undefined: letters, digits, `_` and `-`, without `__`
 * and not ending with `_` (`__` separates the server from the tool in `mcp__<server>__<tool>`).
 */
export function mcpServerNameProblem(name: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
    return `${JSON.stringify(name)} is not a server name: 1 to 64 letters, digits, _ and -`;
  }
  if (name.includes("__") || name.endsWith("_")) {
    return `${JSON.stringify(name)} contains __ or ends with _: __ separates server and tool in mcp__<server>__<tool>`;
  }
  return undefined;
}

/** A record whose keys are checked by `problem`, each bad key reported under its own path. */
function keyedRecord<T extends z.ZodType>(problem: (key: string) => string | undefined, value: T) {
  return z.record(z.string(), value).superRefine((record, ctx) => {
    for (const key of Object.keys(record)) {
      const message = problem(key);
      if (message !== undefined) ctx.addIssue({ code: "custom", path: [key], message });
    }
  });
}

const envNameProblem = (name: string): string | undefined =>
  /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)
    ? undefined
    : `${JSON.stringify(name)} is not an environment variable name: letters, digits and _`;

const fields = z.strictObject({
  /** stdio: the program to start. */
  command: z.string().min(1).optional(),
  /** stdio: its arguments. */
  args: z.array(z.string()).optional(),
  /** stdio: variables set on top of the clean environment Bash commands get. */
  env: keyedRecord(envNameProblem, z.string()).optional(),
  /** Streamable HTTP: the endpoint, http or https. */
  url: z
    .string()
    .refine((url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol), {
      message: "an http or https URL",
    })
    .optional(),
  /** Streamable HTTP: headers sent with every request (e.g. Authorization). */
  headers: httpHeaders.optional(),
});

/** A server Parkway starts and speaks to over its standard input and output. */
export interface McpStdioConfig {
  transport: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** A server Parkway reaches over Streamable HTTP. */
export interface McpHttpConfig {
  transport: "http";
  url: string;
  headers: Record<string, string>;
}

export type McpServerConfig = McpStdioConfig | McpHttpConfig;

/**
 * One MCP server: `{ command, args?, env? }` (stdio) or `{ url, headers? }` (Streamable HTTP).
 */
export const mcpServerConfigSchema = fields
  .superRefine((server, ctx) => {
    const stdio = server.command !== undefined;
    const http = server.url !== undefined;
    if (stdio === http) {
      ctx.addIssue({
        code: "custom",
        path: stdio ? ["url"] : ["command"],
        message: stdio
          ? "give either command (stdio) or url (Streamable HTTP), not both"
          : "is required: give command (a stdio server) or url (a Streamable HTTP server)",
      });
      return;
    }
    for (const key of stdio ? (["headers"] as const) : (["args", "env"] as const)) {
      if (server[key] !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: stdio
            ? "only for a Streamable HTTP server (url)"
            : "only for a stdio server (command)",
        });
      }
    }
  })
  .transform((server): McpServerConfig =>
    server.url !== undefined
      ? { transport: "http", url: server.url, headers: server.headers ?? {} }
      : {
          transport: "stdio",
          command: server.command ?? "",
          args: server.args ?? [],
          env: server.env ?? {},
        },
  );

/** An agent's MCP servers, by name. */
export const mcpServersSchema = keyedRecord(mcpServerNameProblem, mcpServerConfigSchema);
