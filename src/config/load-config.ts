import { readFile } from "node:fs/promises";
import { zodViolations } from "../common/zod-violations.js";
import { type Config, type ConfigInput, configSchema } from "./schema.js";

/** A configuration that cannot be used; `message` is one line naming the offending key. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** Values given on the command line; they win over the environment and the file. */
export interface ConfigFlags {
  config?: string;
  listen?: string;
  data?: string;
  modelUrl?: string;
  model?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsClientCa?: string;
}

/** Environment variables read by Parkway (only `src/config` reads the environment). */
const ENV_KEYS = {
  PARKWAY_LISTEN: ["listen"],
  PARKWAY_DATA: ["data"],
  PARKWAY_LOG_LEVEL: ["logLevel"],
  PARKWAY_SHUTDOWN_GRACE: ["shutdownGrace"],
  PARKWAY_MODEL_URL: ["model", "url"],
  PARKWAY_MODEL: ["model", "name"],
  PARKWAY_MODEL_API_KEY: ["model", "apiKey"],
  PARKWAY_TLS_CERT: ["tls", "cert"],
  PARKWAY_TLS_KEY: ["tls", "key"],
  PARKWAY_TLS_CLIENT_CA: ["tls", "clientCa"],
} as const;

type Layer = Record<string, unknown>;

function setPath(target: Layer, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== "object" || next === null) node[key] = {};
    node = node[key] as Layer;
  }
  node[path[path.length - 1] as string] = value;
}

function merge(base: Layer, over: Layer): Layer {
  const out: Layer = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    const bothObjects =
      typeof prev === "object" &&
      prev !== null &&
      !Array.isArray(prev) &&
      typeof value === "object" &&
      value !== null &&
      !Array.isArray(value);
    out[key] = bothObjects ? merge(prev as Layer, value as Layer) : value;
  }
  return out;
}

async function readConfigFile(file: string): Promise<Layer> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`config file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${file} must hold a JSON object`);
  }
  return parsed as Layer;
}

/**
 * Builds the configuration from defaults, then the JSON config file (`flags.config` or
 * `PARKWAY_CONFIG`), then `PARKWAY_*` environment variables, then flags, and validates the result
 * once with the strict schema. Throws `ConfigError` with a one-line message naming every bad key.
 */
export async function loadConfig(
  flags: ConfigFlags = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<Config> {
  const file = flags.config ?? env.PARKWAY_CONFIG;
  let merged: Layer = file ? await readConfigFile(file) : {};

  const fromEnv: Layer = {};
  for (const [name, path] of Object.entries(ENV_KEYS)) {
    const value = env[name];
    if (value !== undefined && value !== "") setPath(fromEnv, path, value);
  }
  if (!env.PARKWAY_MODEL_API_KEY && env.OPENAI_API_KEY) {
    setPath(fromEnv, ["model", "apiKey"], env.OPENAI_API_KEY);
  }
  merged = merge(merged, fromEnv);

  const fromFlags: Layer = {};
  if (flags.listen !== undefined) fromFlags.listen = flags.listen;
  if (flags.data !== undefined) fromFlags.data = flags.data;
  if (flags.modelUrl !== undefined) setPath(fromFlags, ["model", "url"], flags.modelUrl);
  if (flags.model !== undefined) setPath(fromFlags, ["model", "name"], flags.model);
  if (flags.tlsCert !== undefined) setPath(fromFlags, ["tls", "cert"], flags.tlsCert);
  if (flags.tlsKey !== undefined) setPath(fromFlags, ["tls", "key"], flags.tlsKey);
  if (flags.tlsClientCa !== undefined) setPath(fromFlags, ["tls", "clientCa"], flags.tlsClientCa);
  merged = merge(merged, fromFlags);

  return parseConfig(merged, file);
}

/** Validates a configuration object; throws `ConfigError` naming every bad key on one line. */
export function parseConfig(input: ConfigInput, source?: string): Config {
  const result = configSchema.safeParse(input);
  if (result.success) return result.data;
  const where = source ? ` (${source})` : "";
  const problems = zodViolations(result.error)
    .map((v) => `${v.field}: ${v.description}`)
    .join("; ");
  throw new ConfigError(`invalid config${where}: ${problems}`);
}
