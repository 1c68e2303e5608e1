import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { StoredEvent } from "../../../src/session/stored-event.js";
import { silentLogger } from "../../../src/common/logger.js";
import type { Telemetry } from "../../../src/common/telemetry.js";
import { parseConfig } from "../../../src/config/index.js";
import type {
  Model,
  ModelRequest,
  ModelStreamEvent,
  ModelUsage,
} from "../../../src/model/model.js";
import { buildAgents } from "../../../src/runtime/build-agents.js";
import { SessionManager } from "../../../src/session/session-manager.js";
import type { LeaseOptions } from "../../../src/session/session-leases.js";
import { MemoryStore } from "../../../src/store/memory-store.js";
import type { StoreSignals } from "../../../src/store/signals.js";
import { askUserTool } from "../../../src/tools/ask-user.js";
import { builtinTools } from "../../../src/tools/builtin.js";

/** One model response: what the fake model streams for a request. */
export type Turn = (request: ModelRequest) => AsyncIterable<ModelStreamEvent>;

/** A response with text and tool calls, streamed at once, and the usage it reports, if any. */
export function respond(
  text: string,
  calls: { id: string; name: string; input: object }[] = [],
  usage?: ModelUsage,
): Turn {
  return async function* () {
    await Promise.resolve(); // a model answers asynchronously
    if (text) yield { type: "text_delta", delta: text };
    for (const [index, call] of calls.entries()) {
      yield { type: "tool_call_start", index, id: call.id, name: call.name };
      yield { type: "tool_call_delta", index, delta: JSON.stringify(call.input) };
    }
    if (usage) yield { type: "usage", usage };
    yield { type: "done", finishReason: calls.length > 0 ? "tool_calls" : "stop" };
  };
}

/** A response that streams nothing until the request is aborted (a model still thinking). */
export const hang: Turn = (request) => ({
  [Symbol.asyncIterator]: () => ({
    next: () =>
      new Promise<IteratorResult<ModelStreamEvent>>((_, reject) =>
        request.signal.addEventListener("abort", () => reject(request.signal.reason as Error), {
          once: true,
        }),
      ),
  }),
});

/** Streams a text delta, then nothing until aborted (a model stopped mid-reply). */
export const textThenHang: Turn = (request) => {
  const rest = hang(request)[Symbol.asyncIterator]();
  let sent = false;
  return {
    [Symbol.asyncIterator]: () => ({
      next: (): Promise<IteratorResult<ModelStreamEvent>> => {
        if (sent) return rest.next();
        sent = true;
        return Promise.resolve({ value: { type: "text_delta", delta: "hello" }, done: false });
      },
    }),
  };
};

/** An in-process model that answers with the given turns in order and records every request. */
export class FakeModel implements Model {
  readonly name = "fake";
  readonly requests: ModelRequest[] = [];
  constructor(private readonly turns: Turn[]) {}
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    this.requests.push(request);
    const turn = this.turns[this.requests.length - 1];
    if (!turn) throw new Error(`the fake model has no turn ${this.requests.length}`);
    return turn(request);
  }
}

/** The session core without a server: agents, a session manager and an in-memory store. */
export interface Core {
  manager: SessionManager;
  store: MemoryStore;
  model: FakeModel;
  /** Creates a session of the agent "a" in tenant "t". */
  session(): Promise<string>;
  /** The session's events after `afterSeq` until the first one `until` accepts (included). */
  events(
    sessionId: string,
    until: (e: StoredEvent) => boolean,
    afterSeq?: number,
  ): Promise<StoredEvent[]>;
}

export const TENANT = "t";

/** What else a core may be started with: another node's lease options, signals and model. */
export interface CoreOptions {
  leases?: LeaseOptions;
  signals?: StoreSignals;
  model?: FakeModel;
  telemetry?: Telemetry;
}

/**
 * Starts the core on `store` (a fresh one by default) with a fake model playing `turns`; with
 * `leases`, as one of several nodes on that store.
 */
export async function startCore(
  turns: Turn[],
  store = new MemoryStore(),
  options: CoreOptions = {},
): Promise<Core> {
  const workdir = await mkdtemp(path.join(tmpdir(), "parkway-core-"));
  const config = parseConfig({ agents: [{ id: "a", workingDirectories: [workdir] }] });
  const model = options.model ?? new FakeModel(turns);
  const agents = await buildAgents({
    config,
    defaultModel: () => Promise.resolve(model),
    builtinTools: [...builtinTools(), askUserTool],
  });
  await store.open();
  const manager = new SessionManager(store, agents, silentLogger, {
    ...(options.leases ? { leases: options.leases } : {}),
    ...(options.signals ? { signals: options.signals } : {}),
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
  });
  await manager.start();
  return {
    manager,
    store,
    model,
    async session() {
      const view = await manager.create(TENANT, {
        agentId: "a",
        externalTools: [],
        workingDirectories: [],
      });
      return view.id;
    },
    async events(sessionId, until, afterSeq = 0) {
      const controller = new AbortController();
      const attached = await manager.attach(TENANT, sessionId, afterSeq, controller.signal);
      const out: StoredEvent[] = [];
      try {
        for await (const items of attached.items) {
          for (const item of items) {
            if (item.kind !== "event") continue;
            out.push(item.event);
            if (until(item.event)) return out;
          }
        }
        return out;
      } finally {
        controller.abort();
        await attached.items.return(undefined);
        attached.detach();
      }
    },
  };
}
