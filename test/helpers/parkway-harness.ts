import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createParkwayClient, type ParkwayClient } from "../../src/client/index.js";
import { type ConfigInput, parseConfig } from "../../src/config/index.js";
import {
  type Script,
  startScriptedModel,
  type ScriptedModelServer,
} from "../../src/model/scripted/index.js";
import { type RunningParkway, startParkway } from "../../src/runtime/start-parkway.js";
import type { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { captureLog } from "./capture-log.js";

/** A real server on a free loopback port, its scripted model over HTTP, and a client. */
export interface Harness {
  parkway: RunningParkway;
  model: ScriptedModelServer;
  client: ParkwayClient;
  /**
   * The agent's working directory. Each session works in its own `<workdir>/<session id>` (as it
   * reports in `workingDirectories`) unless the agent sets `shareWorkingDirectories`.
   */
  workdir: string;
  dataDir: string;
  log: ReturnType<typeof captureLog>;
  /**
   * Stops the server (gracefully: attached streams end with UNAVAILABLE) and starts it again on the
   * same address and data directory; `parkway` is then the new server, `client` still reaches it.
   * `whileStopped` runs in between (e.g. to edit the stored records as an older server left them).
   */
  restart(whileStopped?: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the scripted model with `script`, then Parkway with one agent "test" using it through the
 * real openai adapter, on 127.0.0.1:0 with a fresh data directory. `config` is laid over the
 * defaults, except that `config.model` is merged into the scripted model's settings. `agent` may be
 * made from the working directory (created before Parkway starts).
 */
export async function startHarness(
  script: Script,
  agent: Record<string, unknown> | ((workdir: string) => Record<string, unknown>) = {},
  config: Partial<ConfigInput> = {},
  options: { consoleDir?: string } = {},
): Promise<Harness> {
  const root = await mkdtemp(path.join(tmpdir(), "parkway-it-"));
  const workdir = path.join(root, "work");
  const dataDir = path.join(root, "data");
  await mkdir(workdir, { recursive: true });
  const agentConfig = typeof agent === "function" ? agent(workdir) : agent;
  const model = await startScriptedModel({ script });
  const log = captureLog();
  // A restart passes the first server's addresses.
  const start = (address?: string, webAddress?: string) =>
    startParkway({
      config: parseConfig({
        listen: "127.0.0.1:0",
        data: dataDir,
        agents: [{ id: "test", workingDirectories: [workdir], ...agentConfig }] as never,
        ...config,
        ...(address ? { listen: address } : {}),
        ...(webAddress ? { web: { ...config.web, listen: webAddress } } : {}),
        // `config.model` adds to the scripted model's settings (e.g. timeout, maxRetries).
        model: { url: model.url, name: "scripted", maxRetries: 2, ...config.model },
      }),
      log,
      ...options,
    });
  const parkway = await start();
  const client = createParkwayClient(parkway.address);
  const harness: Harness = {
    parkway,
    model,
    client,
    workdir: path.join(root, "work"),
    dataDir,
    log,
    async restart(whileStopped) {
      const address = harness.parkway.address;
      const webUrl = harness.parkway.webUrl;
      await harness.parkway.close();
      await whileStopped?.();
      harness.parkway = await start(address, webUrl && new URL(webUrl).host);
    },
    async close() {
      client.close();
      await harness.parkway.close();
      await model.close();
    },
  };
  return harness;
}

/** The event's kind in snake case, e.g. "reply_start", "text_block_delta". */
export function kind(event: ServerEvent): string {
  return (event.event?.$case ?? "none").replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Collects an iterable of events. */
export async function collect(events: AsyncIterable<ServerEvent>): Promise<ServerEvent[]> {
  const out: ServerEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

/** Kinds with consecutive duplicates of the delta kinds collapsed, for readable sequences. */
export function shape(events: ServerEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    const k = kind(e);
    if (k.endsWith("_delta") && out[out.length - 1] === k) continue;
    out.push(k);
  }
  return out;
}

/** A tool call's result as the events tell it: its text deltas joined, and its end state. */
export function toolResult(events: ServerEvent[], id: string): { state?: number; text: string } {
  let text = "";
  let state: number | undefined;
  for (const e of events) {
    if (e.event?.$case === "toolResultTextDelta" && e.event.value.toolCallId === id) {
      text += e.event.value.delta;
    }
    if (e.event?.$case === "toolResultEnd" && e.event.value.toolCallId === id) {
      state = e.event.value.state;
    }
  }
  return { state, text };
}

/**
 * The ids of the tool calls the events start, in the order the model made them (a script's order):
 * the server names every call itself, whatever id the model gave it.
 */
export function startedCalls(events: ServerEvent[]): string[] {
  return events.flatMap((e) =>
    e.event?.$case === "toolCallStart" ? [e.event.value.toolCallId] : [],
  );
}

/** Every event of a session from seq 1 up to its last seq, read through `client`. */
export async function allEvents(client: ParkwayClient, sessionId: string): Promise<ServerEvent[]> {
  const { lastSeq } = await client.getSession(sessionId);
  const stream = await client.attach(sessionId);
  const events: ServerEvent[] = [];
  while ((events.at(-1)?.seq ?? 0) < lastSeq) {
    const e = await stream.next(AbortSignal.timeout(10_000));
    if (!e) break;
    events.push(e);
  }
  stream.close();
  return events;
}
