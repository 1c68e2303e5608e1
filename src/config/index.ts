export { type AgentConfig, type Config, type ConfigInput, configSchema } from "./schema.js";
export { ConfigError, type ConfigFlags, loadConfig, parseConfig } from "./load-config.js";
