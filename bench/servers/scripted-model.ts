/**
 * Child process: the benchmark's scripted model (bench/lib/model.ts, compiled) served in a process
 * of its own, so that neither the clients of the benchmark process nor its timers share an event
 * loop with it. Reports its base URL; `lastRequest` answers the body of the latest request it
 * received.
 */
import { serveIpc } from "../lib/child.js";
import { benchScript, scriptedModel } from "../lib/model.js";

const { streamDeltas } = JSON.parse(process.argv[2] ?? "{}") as { streamDeltas: number };
const { startScriptedModel } = await scriptedModel(true);
const model = await startScriptedModel({ script: benchScript(streamDeltas) });

serveIpc(
  { url: model.url },
  {
    lastRequest: () => model.requests[model.requests.length - 1],
    close: () => model.close(),
  },
);
