import { pino } from "pino";
import { loadScript, startScriptedModel } from "../model/scripted/index.js";

/**
 * Request bodies `parkway mock-model` keeps for `GET /_scripted/requests` unless told otherwise: a
 * load test of hours holds at most this many conversations in memory.
 */
export const MOCK_MODEL_KEEP_REQUESTS = 100;

/**
 * `parkway mock-model`: serves a script as an OpenAI-compatible model until SIGINT or SIGTERM, then
 * stops. Logs one JSON line `{"msg":"listening","url":"http://HOST:PORT/v1"}` on stdout when ready,
 * and each request at debug level. A script that cannot be used throws a `ScriptError` whose message
 * is one line naming the key path. Resolves with the process exit code.
 */
export async function mockModel(args: {
  script: string;
  listen?: string;
  keepRequests?: number;
}): Promise<number> {
  const script = await loadScript(args.script);
  const log = pino({ level: "debug", base: { service: "parkway-mock-model" } });
  const server = await startScriptedModel({
    script,
    listen: args.listen,
    log,
    keepRequests: args.keepRequests ?? MOCK_MODEL_KEEP_REQUESTS,
  });
  log.info({ url: server.url, script: args.script, turns: script.turns.length }, "listening");

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  log.info({ signal }, "shutting down");
  await server.close();
  log.info({}, "stopped");
  return 0;
}
