import { z } from "zod";
import { DATABASE_CONFIG_DEFAULT, databaseConfigSchema } from "./database-schema.js";
import { duration } from "./duration.js";
import { agentConfigSchema } from "./agent-schema.js";
import { checkExternalToolNames } from "./external-tool-names.js";
import { KEEPALIVE_CONFIG_DEFAULT, keepaliveConfigSchema } from "./keepalive-schema.js";
import { listenAddress } from "./listen-address.js";
import { modelConfigSchema } from "./model-schema.js";
import { notificationsSchema } from "./notification-schema.js";
import { policyConfigSchema } from "./policy-schema.js";
import { tlsConfigSchema } from "./tls-schema.js";

/** An origin allowed to call the web port from a browser: `scheme://host[:port]`, or `*`. */
const corsOrigin = z
  .string()
  .regex(
    /^(\*|https?:\/\/(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?)$/,
    'an origin such as "https://console.example.com" or "http://localhost:5173" (no path), or "*"',
  );

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
