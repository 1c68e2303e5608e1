import path from "node:path";
import { pino } from "pino";
import { type ConfigFlags, loadConfig } from "../config/index.js";
import { createServer } from "../server/index.js";
import { createLevelStore } from "../store/index.js";

/**
 * `parkway serve`: loads the configuration, opens the store, serves until SIGINT or SIGTERM, then
 * drains. Resolves with the process exit code.
 */
export async function serve(flags: ConfigFlags): Promise<number> {
  const config = await loadConfig(flags);
  const log = pino({ level: config.logLevel, base: { service: "parkway" } });
  const dataDir = path.resolve(config.data);
  const store = createLevelStore(dataDir);
  const server = createServer({ store, log });

  const port = await server.listen(config.listen);
  const host = config.listen.slice(0, config.listen.lastIndexOf(":"));
  log.info({ address: `${host}:${port}`, data: dataDir }, "listening");

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  log.info({ signal }, "shutting down");
  await server.shutdown();
  log.info({}, "stopped");
  return 0;
}
