import { z } from "zod";

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

/** The model every agent without its own model uses. */
export const modelConfigSchema = z.strictObject({
  /** Base URL of an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1; unset = the demo model. */
  url: z.url().optional(),
  /** Model name sent to the endpoint. */
  name: z.string().min(1).optional(),
  /** API key sent to the endpoint. */
  apiKey: z.string().optional(),
});

/** The whole server configuration: one strict schema over file, environment and flags. */
export const configSchema = z.strictObject({
  /** Address to listen on. */
  listen: listenAddress.default("127.0.0.1:50051"),
  /** Directory of the embedded LevelDB store. */
  data: z.string().min(1).default("./data"),
  /** Log level. */
  logLevel: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  /** Default model. */
  model: modelConfigSchema.default({}),
});

export type Config = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
