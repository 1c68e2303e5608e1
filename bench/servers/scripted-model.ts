/**
 * Child process: the benchmark's scripted model (bench/lib/model.ts) served in a process of its
 * own, so that neither the clients of the benchmark process nor its timers share an event loop with
 * it. Reports its base URL; `lastRequest` answers the body of the latest request it received.
 */
import { startScriptedModel } from "../../src/model/scripted/index.js";
import { serveIpc } from "../lib/child.js";
import { benchScript } from "../lib/model.js";

const { streamDeltas } = JSON.parse(process.argv[2] ?? "{}") as { streamDeltas: number };
const model = await startScriptedModel({ script: benchScript(streamDeltas) });

serveIpc(
  { url: model.url },
  {
    lastRequest: () => model.requests[model.requests.length - 1],
    close: () => model.close(),
  },
);
