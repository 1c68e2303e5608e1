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
  databaseUrl?: string;
  metricsListen?: string;
  webListen?: string;
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
  PARKWAY_DATABASE_URL: ["database", "url"],
  PARKWAY_NODE_ID: ["database", "nodeId"],
  PARKWAY_LOG_LEVEL: ["logLevel"],
  PARKWAY_METRICS_LISTEN: ["metrics", "listen"],
  PARKWAY_WEB_LISTEN: ["web", "listen"],
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
 * `warn` hears of a setting that is valid but unused (`data` when `database.url` is set).
 */
export async function loadConfig(
  flags: ConfigFlags = {},
  env: NodeJS.ProcessEnv = process.env,
  warn: (message: string) => void = () => undefined,
): Promise<Config> {
  const file = flags.config ?? env.PARKWAY_CONFIG;
  let merged: Layer = file ? await readConfigFile(file) : {};

  // Where each value set by the environment or a flag came from, by its dotted key.
  const sources = new Map<string, string>();
  const fromEnv: Layer = {};
  const setFromEnv = (name: string, path: readonly string[], value: string) => {
    setPath(fromEnv, path, value);
    sources.set(path.join("."), `environment variable ${name}`);
  };
  for (const [name, path] of Object.entries(ENV_KEYS)) {
    const value = env[name];
    if (value !== undefined && value !== "") setFromEnv(name, path, value);
  }
  if (!env.PARKWAY_MODEL_API_KEY && env.OPENAI_API_KEY) {
    setFromEnv("OPENAI_API_KEY", ["model", "apiKey"], env.OPENAI_API_KEY);
  }
  merged = merge(merged, fromEnv);

  const fromFlags: Layer = {};
  for (const [flag, name, path] of FLAG_KEYS) {
    const value = flags[flag];
    if (value === undefined) continue;
    setPath(fromFlags, path, value);
    sources.set(path.join("."), `flag --${name}`);
  }
  merged = merge(merged, fromFlags);

  const unused = unusedData(merged, (key) => sources.get(key) ?? `config file ${file ?? ""}`);
  if (unused !== undefined) warn(unused);
  return parseConfig(merged, file, sources);
}

/**
 * Why `data`, set alongside `database.url`, is unused (undefined when it is not): the server opens
 * PostgreSQL, and an operator who meant the data directory should hear so.
 */
function unusedData(merged: Layer, sourceOf: (key: string) => string): string | undefined {
  const database = merged.database;
  const url =
    typeof database === "object" && database !== null ? (database as Layer).url : undefined;
  if (merged.data === undefined || url === undefined || url === "") return undefined;
  return (
    `data (from ${sourceOf("data")}) is unused: database.url (from ${sourceOf("database.url")}) ` +
    "is set, so the store is PostgreSQL"
  );
}

/** Flags that set a configuration value: the flag's property, its name, and the key it sets. */
const FLAG_KEYS: readonly [Exclude<keyof ConfigFlags, "config">, string, readonly string[]][] = [
  ["listen", "listen", ["listen"]],
  ["data", "data", ["data"]],
  ["databaseUrl", "database-url", ["database", "url"]],
  ["metricsListen", "metrics-listen", ["metrics", "listen"]],
  ["webListen", "web-listen", ["web", "listen"]],
  ["modelUrl", "model-url", ["model", "url"]],
  ["model", "model", ["model", "name"]],
  ["tlsCert", "tls-cert", ["tls", "cert"]],
  ["tlsKey", "tls-key", ["tls", "key"]],
  ["tlsClientCa", "tls-client-ca", ["tls", "clientCa"]],
];

/**
 * Validates a configuration object; throws `ConfigError` naming every bad key on one line, each
 * with where its value came from: `sources` (dotted key → flag or environment variable), else the
 * config file `file`.
 */
export function parseConfig(
  input: ConfigInput,
  file?: string,
  sources: ReadonlyMap<string, string> = new Map(),
): Config {
  const result = configSchema.safeParse(input);
  if (result.success) return result.data;
  const problems = zodViolations(result.error)
    .map((v) => {
      const source = sourceOf(v.field, sources) ?? (file ? `config file ${file}` : undefined);
      return `${v.field}${source ? ` (from ${source})` : ""}: ${v.description}`;
    })
    .join("; ");
  throw new ConfigError(`invalid config: ${problems}`);
}

/** The source recorded for `field` or the nearest key that holds it (`model` for `model.url`). */
function sourceOf(field: string, sources: ReadonlyMap<string, string>): string | undefined {
  for (let key = field; ;) {
    const source = sources.get(key);
    if (source) return source;
    const parent = key.replace(/(\.[^.[]+|\[\d+\])$/, "");
    if (parent === key) return undefined;
    key = parent;
  }
}
