import path from "node:path";
import { pino } from "pino";
import { type ConfigFlags, loadConfig } from "../config/index.js";
import { startParkway } from "../runtime/start-parkway.js";

/**
 * `parkway serve`: loads the configuration, starts Parkway, serves until SIGINT or SIGTERM, then
 * drains. Resolves with the process exit code.
 */
export async function serve(flags: ConfigFlags): Promise<number> {
  const config = await loadConfig(flags);
  const log = pino({ level: config.logLevel, base: { service: "parkway" } });
  const parkway = await startParkway({ config, log });
  const transport = !config.tls ? "plaintext" : config.tls.clientCa ? "mtls" : "tls";
  log.info({ address: parkway.address, data: path.resolve(config.data), transport }, "listening");

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  log.info({ signal }, "shutting down");
  await parkway.close();
  log.info({}, "stopped");
  return 0;
}
