import { z } from "zod";
import { DATABASE_CONFIG_DEFAULT, databaseConfigSchema } from "./database-schema.js";
import { duration } from "./duration.js";

import { mcpServersSchema } from "./mcp-schema.js";
import { policyConfigSchema } from "./policy-schema.js";
import { notificationsSchema } from "./notification-schema.js";
import { DEFAULT_MAX_REPLY_BYTES, MAX_REPLY_BYTES } from "../common/message-size.js";
import { permissionModeSchema } from "../permissions/index.js";
import { checkExternalToolNames } from "./external-tool-names.js";

/** `HOST:PORT` (IPv6 hosts in brackets), port 0–65535; 0 picks a free port. */
export const listenAddress = z.string().superRefine((value, ctx) => {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d+)$/.exec(value);
  if (!match) {
    ctx.addIssue({ code: "custom", message: `expected HOST:PORT, got ${JSON.stringify(value)}` });
    return;
  }
  const port = Number(match[2]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    ctx.addIssue({ code: "custom", message: `invalid port ${match[2]} (expected 0-65535)` });
  }
});

/** An origin allowed to call the web port from a browser: `scheme://host[:port]`, or `*`. */
const corsOrigin = z
  .string()
  .regex(
    /^(\*|https?:\/\/(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?)$/,
    'an origin such as "https://console.example.com" or "http://localhost:5173" (no path), or "*"',
  );

/** The model every agent without its own model uses. */
export const modelConfigSchema = z.strictObject({
  /** Base URL of an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1; unset = the demo model. */
  url: z
    .url({
      protocol: /^https?$/,
      error: "expected an http or https URL such as http://127.0.0.1:8080/v1",
    })
    .optional(),
  /** Model name sent to the endpoint. */
  name: z.string().min(1).optional(),
  /** API key sent to the endpoint. */
  apiKey: z.string().optional(),
  /** Retries on connection errors, 429 and 5xx. */
  maxRetries: z.coerce.number().int().min(0).max(10).default(2),
  /** How long to wait for a response to start (per attempt), then between two streamed chunks. */
  timeout: duration().default(600_000),
});

/**
 * HTTP/2 keepalive of the server's connections. Every `time` the server pings each connection; a
 * peer that does not answer within `timeout` (a frozen process, a sleeping laptop, a network that
 * dropped it without a reset) is disconnected and its streams end, which frees their places under
 * `limits.streamsPerSession`. A dead peer is found within `time + timeout` (50 s by default): long
 * enough that a ping costs nothing and a busy client has time to answer, short enough that a
 * reconnecting client finds its places free within a minute. The server accepts the clients' own
 * keepalive pings at any interval (grpc-js sends no GOAWAY too_many_pings).
 */
export const keepaliveConfigSchema = z.strictObject({
  /** Ping each connection; false leaves dead peers' streams open until the OS notices. */
  enabled: z.boolean().default(true),
  /** Interval between the server's pings on each connection. */
  time: duration({ min: 100, max: 86_400_000, text: ["100ms", "24h"] }).default(30_000),
  /** How long the answer to a ping may take before the connection is closed. */
  timeout: duration({ min: 100, max: 600_000, text: ["100ms", "10m"] }).default(20_000),
});
export type KeepaliveConfig = z.infer<typeof keepaliveConfigSchema>;
export const KEEPALIVE_CONFIG_DEFAULT: KeepaliveConfig = {
  enabled: true,
  time: 30_000,
  timeout: 20_000,
};

/**
 * TLS for the gRPC listener: PEM files read when the server starts. With `clientCa`, clients must
 * present a certificate signed by it (mTLS); grpc-js can only require and verify client
 * certificates, not ask for them optionally, so `requireClientCert` follows `clientCa` and may be
 * written out but not contradict it.
 */
/** Where each `tls` key can be given, for the message naming a missing one. */
const TLS_SOURCES = {
  cert: "--tls-cert, PARKWAY_TLS_CERT or tls.cert in the config file",
  key: "--tls-key, PARKWAY_TLS_KEY or tls.key in the config file",
} as const;

export const tlsConfigSchema = z
  .strictObject({
    /** Server certificate (chain), PEM. Required: optional here only to name what is missing. */
    cert: z.string().min(1).optional(),
    /** Private key of `cert`, PEM (unencrypted). Required, as `cert`. */
    key: z.string().min(1).optional(),
    /** CA certificate(s), PEM, that client certificates must be signed by. */
    clientCa: z.string().min(1).optional(),
    /** Refuse clients without a certificate signed by `clientCa`; true exactly when it is set. */
    requireClientCert: z.boolean().optional(),
  })
  .superRefine((tls, ctx) => {
    // A half TLS setup names what is missing, what it goes with, and where to give it.
    const given =
      tls.cert !== undefined ? "tls.cert" : tls.key !== undefined ? "tls.key" : undefined;
    const mtls = tls.clientCa !== undefined ? "tls.clientCa" : undefined;
    for (const field of ["cert", "key"] as const) {
      if (tls[field] !== undefined) continue;
      const withWhat = given ?? mtls;
      ctx.addIssue({
        code: "custom",
        path: [field],
        message: `${withWhat ? `required with ${withWhat}` : "required for TLS"} (${TLS_SOURCES[field]})`,
      });
    }
    if (tls.requireClientCert === true && tls.clientCa === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["requireClientCert"],
        message: "needs clientCa, the CA that signs the client certificates",
      });
    }
    if (tls.requireClientCert === false && tls.clientCa !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["clientCa"],
        message:
          "client certificates are verified only when required; remove clientCa or set requireClientCert to true",
      });
    }
  })
  .transform((tls) => ({
    ...tls,
    cert: tls.cert ?? "",
    key: tls.key ?? "",
    requireClientCert: tls.clientCa !== undefined,
  }));
export type TlsConfig = z.infer<typeof tlsConfigSchema>;

/** A tool the client executes, declared for every session of an agent. */
export const externalToolConfigSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/),
  description: z.string().default(""),
  /** JSON Schema of the input. */
  inputSchema: z.record(z.string(), z.unknown()).default({ type: "object" }),
  /** JSON Schema a successful result's metadata must satisfy. */
  metadataSchema: z.record(z.string(), z.unknown()).optional(),
});

/** An environment variable's name. */
const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name: letters, digits and _");

/**
 * How Bash runs commands. Commands get a clean environment (PATH, HOME, USER, LOGNAME, SHELL, LANG,
 * TERM=dumb, PAGER=cat, GIT_PAGER=cat, TMPDIR), never the server's own: `passEnv` names server
 * variables to hand through, and `env` sets values (it wins over both).
 */
export const bashConfigSchema = z.strictObject({
  /** Variables set for every command, e.g. {"NODE_ENV": "test"}. */
  env: z.record(envName, z.string()).default({}),
  /** Names of the server's variables passed through when set, e.g. ["GOPATH", "SSH_AUTH_SOCK"]. */
  passEnv: z.array(envName).default([]),
  /** Processes a command may run at once (its process group); past it the group is killed. */
  maxProcesses: z.number().int().min(1).max(100_000).default(1024),
});
export type BashConfig = z.infer<typeof bashConfigSchema>;
export const BASH_CONFIG_DEFAULT: BashConfig = { env: {}, passEnv: [], maxProcesses: 1024 };

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

/** The whole server configuration: one strict schema over file, environment and flags. */
export const configSchema = z
  .strictObject({
    /** Address to listen on. */
    listen: listenAddress.default("127.0.0.1:50051"),
    /** Directory of the embedded LevelDB store (unused when `database.url` is set). */
    data: z.string().min(1).default("./data"),
    /** A PostgreSQL database instead of the embedded LevelDB store. */
    database: databaseConfigSchema.default(DATABASE_CONFIG_DEFAULT),
    /**
     * On SIGTERM or SIGINT, how long tools that are running may take to finish before they are
     * interrupted (replies stop at once; a tool that finishes in time is recorded with its result).
     */
    shutdownGrace: duration({ min: 0, max: 3_600_000, text: ["0s", "1h"] }).default(10_000),
    /** Log level. */
    logLevel: z
      .enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"])
      .default("info"),
    /** Default model. */
    model: modelConfigSchema.default({ maxRetries: 2, timeout: 600_000 }),
    /**
     * How much of each session's event log to keep: the events of the last `keepFinishedReplies`
     * finished replies (older replies are compacted to their final message); unset keeps everything.
     * How many request ids each session remembers for idempotent retries (`requestIdsPerSession`,
     * the most recent ones) and for how long after their input was applied (`requestIdTtl`); a
     * forgotten id is treated as new.
     */
    retention: z
      .strictObject({
        keepFinishedReplies: z.number().int().min(0).optional(),
        requestIdsPerSession: z.number().int().min(1).max(1_000_000).default(1000),
        requestIdTtl: duration().default(24 * 3_600_000),
      })
      .default({ requestIdsPerSession: 1000, requestIdTtl: 24 * 3_600_000 }),
    /**
     * Tenants and their bearer tokens (SHA-256 hex digests of the tokens, never the tokens). With
     * none, the server is single-tenant and listens on loopback only unless `allowRemote` is set.
     */
    tenants: z
      .array(
        z.strictObject({
          id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/),
          tokens: z
            .array(
              z.strictObject({
                /** Recorded as who created a rule or answered a call (`created_by`). */
                name: z.string().min(1).max(128),
                sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, "a SHA-256 hex digest of the token"),
              }),
            )
            .min(1),
          /** An external policy decision point for the tenant's sessions of agents without one. */
          policy: policyConfigSchema.optional(),
          /** Receivers told when the tenant's replies park, expire and end, besides the agent's. */
          notifications: notificationsSchema,
        }),
      )
      .default([]),
    /** Limits; past one, calls answer RESOURCE_EXHAUSTED naming it. */
    limits: z
      .strictObject({
        /** Largest gRPC message accepted, in bytes. */
        messageBytes: z
          .number()
          .int()
          .positive()
          .default(4 * 1024 * 1024),
        /** Sessions one tenant may have. */
        sessionsPerTenant: z.number().int().positive().default(100_000),
        /** Replies running at once, across the server (parked replies do not count). */
        runningReplies: z.number().int().positive().default(256),
        /** Streams attached to one session at once. */
        streamsPerSession: z.number().int().positive().default(64),
        /** Inputs one stream may send per second (a burst of as many is allowed). */
        inputsPerSecond: z.number().positive().default(500),
        /**
         * Events one stream may fall behind (its client not reading) before it ends with
         * RESOURCE_EXHAUSTED; the session keeps running and the client may reattach with after_seq.
         */
        streamBacklogEvents: z.number().int().positive().default(10_000),
      })
      .default({
        messageBytes: 4 * 1024 * 1024,
        sessionsPerTenant: 100_000,
        runningReplies: 256,
        streamsPerSession: 64,
        inputsPerSecond: 500,
        streamBacklogEvents: 10_000,
      }),
    /** HTTP/2 keepalive pings that find dead peers and end their streams. */
    keepalive: keepaliveConfigSchema.default(KEEPALIVE_CONFIG_DEFAULT),
    /** TLS (and mTLS with `tls.clientCa`); unset = plaintext. */
    tls: tlsConfigSchema.optional(),
    /** Listen beyond loopback without tenants (anyone who can connect acts for "default"). */
    allowRemote: z.boolean().default(false),
    /**
     * Prometheus metrics: `GET /metrics` on `listen` (`HOST:PORT`; unset = off), bound to loopback
     * unless tenants are configured or `allowRemote` is set, like the gRPC port. With `tenantLabel`,
     * replies and tokens are counted per tenant (one series per tenant: mind the cardinality).
     */
    metrics: z
      .strictObject({
        listen: listenAddress.optional(),
        tenantLabel: z.boolean().default(false),
      })
      .default({ tenantLabel: false }),
    /**
     * The web port: every service over the Connect protocol (JSON and binary) and gRPC-web, and the
     * web console at `/`, on `listen` (`HOST:PORT`; unset = off), bound to loopback unless tenants
     * are configured or `allowRemote` is set, with the gRPC port's TLS, tokens and limits.
     * `corsOrigins` are the origins that browser apps may call it from (`scheme://host[:port]`, or
     * `*` for any); default none (no CORS headers).
     */
    web: z
      .strictObject({
        listen: listenAddress.optional(),
        corsOrigins: z.array(corsOrigin).default([]),
      })
      .default({ corsOrigins: [] }),
    /** The agents; none configured = one agent "assistant" with every built-in tool. */
    agents: z
      .array(agentConfigSchema)
      .default([])
      .superRefine((agents, ctx) => {
        const seen = new Set<string>();
        agents.forEach((a, i) => {
          if (seen.has(a.id)) {
            ctx.addIssue({
              code: "custom",
              path: [i, "id"],
              message: `duplicate agent id ${a.id}`,
            });
          }
          if (a.maxBlockBytes > a.maxReplyBytes) {
            ctx.addIssue({
              code: "custom",
              path: [i, "maxBlockBytes"],
              message: `must be at most maxReplyBytes (${a.maxReplyBytes}): a block is part of its reply`,
            });
          }
          seen.add(a.id);
          checkExternalToolNames(a.externalTools, (j, message) =>
            ctx.addIssue({ code: "custom", path: [i, "externalTools", j, "name"], message }),
          );
        });
      }),
  })
  .superRefine((config, ctx) => {
    // Answer links are served on the web port: without it, a link would point nowhere.
    if (config.web.listen !== undefined) return;
    const owners = [
      ["agents", config.agents],
      ["tenants", config.tenants],
    ] as const;
    for (const [key, list] of owners) {
      list.forEach((owner, i) =>
        owner.notifications.forEach((target, j) => {
          if (!target.answerLinks) return;
          ctx.addIssue({
            code: "custom",
            path: [key, i, "notifications", j, "answerLinks"],
            message: "needs the web port (web.listen): answer links are served there",
          });
        }),
      );
    }
  });

export type Config = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
