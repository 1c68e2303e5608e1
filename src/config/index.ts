export {
  type AgentConfig,
  type BashConfig,
  type Config,
  type ConfigInput,
  configSchema,
  type KeepaliveConfig,
  type TlsConfig,
} from "./schema.js";
export type { PolicyConfig } from "./policy-schema.js";
export type { DatabaseConfig } from "./database-schema.js";
export { bashEnvironment } from "./bash-env.js";
export { ConfigError, type ConfigFlags, loadConfig, parseConfig } from "./load-config.js";
export { readTlsFiles, type TlsMaterial } from "./read-tls-files.js";
export { clientToken } from "./client-env.js";
export { tracingFromEnv } from "./tracing-env.js";
