import path from "node:path";
import { jsonLogger } from "../common/logger.js";
import { type ConfigFlags, loadConfig } from "../config/index.js";
import { EXIT_STORAGE_FAILURE, startParkway } from "../runtime/start-parkway.js";

/**
 * `parkway serve`: loads the configuration, starts Parkway, serves until SIGINT or SIGTERM, then
 * shuts down in order (see `RunningParkway.close`). A signal that comes while the server starts is
 * acted on once it has started; further signals during the shutdown are logged and change nothing
 * (`npm start` forwards the terminal's signal, so the server sees each one twice). Resolves with the
 * process exit code: 0, or `EXIT_STORAGE_FAILURE` (75) when a write to the store failed; the server
 * then drains the calls in flight and stops, so that a supervisor restarts it.
 */
export async function serve(flags: ConfigFlags): Promise<number> {
  const unused: string[] = [];
  const config = await loadConfig(flags, undefined, (message) => unused.push(message));
  const log = jsonLogger(config.logLevel);
  for (const message of unused) log.warn({}, message);
  let received: NodeJS.Signals | undefined;
  let wake: ((signal: NodeJS.Signals) => void) | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (received) {
      log.info({ signal }, "already shutting down");
      return;
    }
    received = signal;
    wake?.(signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const parkway = await startParkway({ config, log });
  const transport = !config.tls ? "plaintext" : config.tls.clientCa ? "mtls" : "tls";
  // The database's URL with its password masked (the store's location), or the data directory.
  const where = config.database.url
    ? { database: parkway.store.location }
    : { data: path.resolve(config.data) };
  const metrics = parkway.metricsUrl ? { metricsUrl: parkway.metricsUrl } : {};
  const web = parkway.webUrl ? { webUrl: parkway.webUrl } : {};
  log.info({ address: parkway.address, ...where, transport, ...metrics, ...web }, "listening");
  const stop = await new Promise<{ signal: NodeJS.Signals } | { storageFailed: true }>(
    (resolve) => {
      if (received) resolve({ signal: received });
      wake = (signal) => resolve({ signal });
      void parkway.storageFailure.then(() => resolve({ storageFailed: true }));
    },
  );
  if ("signal" in stop) {
    log.info({ signal: stop.signal, graceMs: config.shutdownGrace }, "shutting down");
    await parkway.close();
    log.info({}, "stopped");
    return 0;
  }
  log.info({ exitCode: EXIT_STORAGE_FAILURE }, "shutting down after the storage failure");
  await parkway
    .close({ drain: true })
    .catch((err: unknown) => log.warn({ err }, "could not close cleanly"));
  log.info({ exitCode: EXIT_STORAGE_FAILURE }, "stopped");
  return EXIT_STORAGE_FAILURE;
}
