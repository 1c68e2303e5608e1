import { z } from "zod";
import { DEFAULT_MAX_REPLY_BYTES, MAX_REPLY_BYTES } from "../common/message-size.js";
import { permissionModeSchema } from "../permissions/index.js";
import { BASH_CONFIG_DEFAULT, bashConfigSchema } from "./bash-schema.js";
import { duration } from "./duration.js";
import { mcpServersSchema } from "./mcp-schema.js";
import { modelConfigSchema } from "./model-schema.js";
import { notificationsSchema } from "./notification-schema.js";
import { policyConfigSchema } from "./policy-schema.js";

/** A tool the client executes, declared for every session of an agent. */
export const externalToolConfigSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/),
  description: z.string().default(""),
  /** JSON Schema of the input. */
  inputSchema: z.record(z.string(), z.unknown()).default({ type: "object" }),
  /** JSON Schema a successful result's metadata must satisfy. */
  metadataSchema: z.record(z.string(), z.unknown()).optional(),
});

/** One agent. */
export const agentConfigSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, "letters, digits, _ and - only"),
  description: z.string().default(""),
  systemPrompt: z
    .string()
    .default("You are a helpful assistant. Use the tools you are given when they help."),
  /** The agent's own model; unset uses the server's. */
  model: modelConfigSchema.optional(),
  /** Built-in tools it may use, by name; unset = all. */
  tools: z.array(z.string()).optional(),
  externalTools: z.array(externalToolConfigSchema).default([]),
  permissionMode: permissionModeSchema.default("default"),
  /**
   * Directories its file tools and Bash are confined to (created when missing); each session works
   * in a directory of its own inside them unless `shareWorkingDirectories` is set.
   */
  workingDirectories: z.array(z.string().min(1)).min(1).default(["./workspace"]),
  /**
   * Whether its sessions share its working directories. False (the default): each session works in
   * a directory of its own, `<dir>/<session id>` inside each of them, created (mode 0700) with the
   * session, so no session (of any tenant) reads or changes another's files by accident. True:
   * every session works in the agent's directories themselves, and CreateSession's
   * working_directories may pick directories inside them.
   */
  shareWorkingDirectories: z.boolean().default(false),
  maxIters: z.number().int().min(1).max(1000).default(20),
  /** How long a parked call waits for an answer; unset = no expiry. */
  confirmTimeout: duration().optional(),
  expiryPolicy: z.enum(["deny", "interrupt"]).default("deny"),
  maxToolOutputBytes: z.number().int().positive().default(1_000_000),
  /**
   * Most bytes of one block the model streams: text and thinking past it are cut with a marker, a
   * tool call's input past it is dropped and the call fails with an error the model reads. At most
   * `maxReplyBytes`, since a block is part of its reply.
   */
  maxBlockBytes: z
    .number()
    .int()
    .min(1024)
    .max(
      MAX_REPLY_BYTES,
      `at most ${MAX_REPLY_BYTES} (1.75 MiB), so that every client can receive it`,
    )
    .default(1024 * 1024),
  /**
   * Most bytes a reply's message may hold (text, thinking, tool inputs and results, counted as
   * clients receive them): past it the model's output is cut with a marker and the reply ends with
   * ERROR `reply_too_large`. Default 1.5 MiB; at most 1.75 MiB, since Reply's response for a parked
   * reply carries the waiting calls twice and must stay under gRPC's default 4 MiB receive limit.
   */
  maxReplyBytes: z
    .number()
    .int()
    .min(4096)
    .max(
      MAX_REPLY_BYTES,
      `at most ${MAX_REPLY_BYTES} (1.75 MiB), so that every client can receive it`,
    )
    .default(DEFAULT_MAX_REPLY_BYTES),
  bash: bashConfigSchema.default(BASH_CONFIG_DEFAULT),
  /**
   * MCP servers whose tools the agent may call, by name: each tool is `mcp__<server>__<tool>`. A
   * stdio server is started with Bash's environment plus its `env`, in the first working directory.
   */
  mcpServers: mcpServersSchema.default({}),
  /** An external policy decision point for its calls; wins over its tenant's `policy`. */
  policy: policyConfigSchema.optional(),
  /** Receivers told when the agent's replies park, expire and end (see `notification-schema.ts`). */
  notifications: notificationsSchema,
  /** Rules in the display form, e.g. "Bash(npm test:*)", "Write(/repo/src/**)", "Read". */
  permissions: z
    .strictObject({
      allow: z.array(z.string()).default([]),
      deny: z.array(z.string()).default([]),
      ask: z.array(z.string()).default([]),
    })
    .default({ allow: [], deny: [], ask: [] }),
});
export type AgentConfig = z.infer<typeof agentConfigSchema>;
