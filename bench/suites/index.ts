import type { Suite } from "../lib/runner.js";
import { clientRows } from "./clients.js";
import { idleStreams } from "./idle-streams.js";
import { inputLatency } from "./input-latency.js";
import { langgraphRows } from "./langgraph.js";
import { modelOverhead } from "./model-overhead.js";
import { parkLatency } from "./park-latency.js";
import { parkedScale } from "./parked-scale.js";
import { postgresRows } from "./postgres.js";
import { restart } from "./restart.js";
import { startup } from "./startup.js";
import { telemetry } from "./telemetry.js";
import { throughput } from "./throughput.js";

/** Every benchmark, in the order the table lists them. */
export const SUITES: Record<string, Suite> = {
  input: async (config) => (await inputLatency(config)).rows,
  park: parkLatency,
  stream: throughput,
  parked: parkedScale,
  restart,
  startup,
  idle: idleStreams,
  model: modelOverhead,
  pg: postgresRows,
  telemetry,
  langgraph: langgraphRows,
  clients: clientRows,
};
