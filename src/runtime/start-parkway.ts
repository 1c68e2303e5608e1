import { readTlsFiles } from "../config/read-tls-files.js";
import { tracingEnvWarnings, tracingFromEnv } from "../config/tracing-env.js";
import type { Config } from "../config/schema.js";
import { jsonLogger, type Logger } from "../common/logger.js";
import type { Model } from "../model/model.js";
import { createOpenAIModel } from "../model/openai-model.js";
import {
  DEMO_SCRIPT_PATH,
  type ScriptedModelServer,
  startScriptedModel,
} from "../model/scripted/index.js";
import { createAgentService } from "../server/agent-service-impl.js";
import { createAuditService } from "../server/audit-service-impl.js";
import { notificationTargets } from "./notification-targets.js";
import { createServer, type ParkwayServer } from "../server/create-server.js";
import { createPermissionService } from "../server/permission-service-impl.js";
import { listAudit } from "../session/audit-log.js";
import { listDeadLetters } from "../session/notifications/dead-letters.js";
import { answerByLink } from "../session/notifications/answer-by-link.js";
import { PermissionAdmin } from "../session/permission-admin.js";
import { SessionManager } from "../session/session-manager.js";
import type { StorageFailure } from "../store/storage-failure.js";
import { MeasuredStore } from "../store/measured-store.js";
import type { Store } from "../store/store.js";
import { countParked, ParkedGauge } from "../session/parked-count.js";
import { type RunningTelemetry, startTelemetry } from "../telemetry/start-telemetry.js";
import { askUserTool } from "../tools/ask-user.js";
import { builtinTools } from "../tools/builtin.js";
import type { Tool } from "../tools/tool.js";
import { createAuthenticator } from "../server/auth.js";
import { AgentMcp } from "./agent-mcp.js";
import { createSignals, createStore } from "./create-store.js";
import { AgentConfigError, buildAgents } from "./build-agents.js";
import { removeEmptyDirectories } from "../common/make-directory.js";

/** What an embedding application may add to the configuration. */
export interface StartOptions {
  config: Config;
  /** Where Parkway logs; default: JSON lines on standard output at `config.logLevel` (pino). */
  log?: Logger;
  /** Extra tools given to every agent. */
  tools?: Tool[];
  /** A model used instead of the configured default. */
  model?: Model;
  /**
   * A store used instead of the configured one (PostgreSQL at `config.database.url`, else LevelDB
   * under `config.data`).
   */
  store?: Store;
  /** The web console's folder, served at `/` on the web port; default `dist/console/` of the package. */
  consoleDir?: string;
}

/**
 * The exit code of `parkway serve` after a storage failure (EX_TEMPFAIL in sysexits.h): the store
 * refuses writes until the process restarts, so a supervisor should restart it.
 */
export const EXIT_STORAGE_FAILURE = 75;

/**
 * The exit code of `parkway serve` when the store's files are damaged or it lost records (EX_DATAERR
 * in sysexits.h): restarting does not help; `parkway repair` does.
 */
export const EXIT_STORE_DAMAGED = 65;

/** A running Parkway: the gRPC server and what it started. */
export interface RunningParkway {
  /** `HOST:PORT` actually bound. */
  readonly address: string;
  readonly port: number;
  readonly server: ParkwayServer;
  /** The store the server uses. */
  readonly store: Store;
  /** Where Prometheus scrapes the metrics (`http://HOST:PORT/metrics`), when they are on. */
  readonly metricsUrl: string | undefined;
  /**
   * The web port (`http://HOST:PORT`, `https://` with TLS), when it is on: Connect, gRPC-web and
   * the web console.
   */
  readonly webUrl: string | undefined;
  /**
   * Resolves when a write to the store fails (and never otherwise). By then the failure is logged,
   * health reports NOT_SERVING, inputs answer UNAVAILABLE naming the failure, running replies are
   * aborted and streams ended; reads are still answered. Nothing is written again by this process:
   * `close()` it and start a new one.
   */
  readonly storageFailure: Promise<StorageFailure>;
  /**
   * How many sessions are held in memory: those with a stream attached, a reply running or a call
   * under way. Every other session, parked ones included, lives only in the store.
   */
  liveSessions(): number;
  /**
   * Shuts down in order: new calls and inputs answer UNAVAILABLE "server shutting down" (health
   * NOT_SERVING); running replies are interrupted, their running tools given `shutdownGrace` to
   * finish; then streams end, calls in flight finish, the port is released, the store and the demo
   * model close. Nothing writes to the store after it closes. With `drain` (after a storage
   * failure), the calls in flight are first given time to finish by themselves (see
   * `ParkwayServer.shutdown`).
   */
  close(options?: { drain?: boolean }): Promise<void>;
}

/** True for an address on the loopback interface. */
function isLoopback(listen: string): boolean {
  const host = listen.slice(0, listen.lastIndexOf(":"));
  return /^(127\.\d+\.\d+\.\d+|localhost|\[::1\]|::1)$/.test(host);
}

/**
 * Builds and starts Parkway from a configuration: the default model (the configured endpoint, or
 * the built-in demo script served on loopback), the agents, the store, the sessions and the gRPC
 * server. The TLS files are read and checked first: a bad one rejects with `ConfigError` before
 * anything starts.
 *
 * The port is bound first and answers UNAVAILABLE "server starting" (health NOT_SERVING) while the
 * store opens and the replies a stop cut short are recovered, so no call reaches a store that is
 * not ready; a port in use fails (`ListenError`) before the data directory is touched. Resolves once
 * the server reports SERVING. A failure while starting closes what was opened, removes the agents'
 * working directories it made if nothing was written into them, and rejects.
 */
export async function startParkway(options: StartOptions): Promise<RunningParkway> {
  const madeDirectories: string[] = [];
  try {
    return await startWith(options, madeDirectories);
  } catch (err) {
    await removeEmptyDirectories(madeDirectories);
    throw err;
  }
}

async function startWith(
  options: StartOptions,
  madeDirectories: string[],
): Promise<RunningParkway> {
  const { config } = options;
  const log = options.log ?? jsonLogger(config.logLevel);
  const tls = config.tls ? await readTlsFiles(config.tls) : undefined;
  let demo: ScriptedModelServer | undefined;
  const defaultModel = async (): Promise<Model> => {
    if (options.model) return options.model;
    if (config.model.url) {
      return createOpenAIModel({
        baseURL: config.model.url,
        model: config.model.name ?? "default",
        ...(config.model.apiKey ? { apiKey: config.model.apiKey } : {}),
        maxRetries: config.model.maxRetries,
        timeoutMs: config.model.timeout,
      });
    }
    demo ??= await startScriptedModel({ script: DEMO_SCRIPT_PATH, log });
    log.info(
      { model: "parkway-demo", url: demo.url },
      "using the built-in demo model; set PARKWAY_MODEL_URL (or --model-url) to use a real endpoint",
    );
    return createOpenAIModel({ baseURL: demo.url, model: "parkway-demo", maxRetries: 0 });
  };
  const mcp = new AgentMcp(log);
  let agents: Awaited<ReturnType<typeof buildAgents>>;
  try {
    agents = await buildAgents({
      config,
      defaultModel,
      builtinTools: [...builtinTools(), askUserTool],
      ...(options.tools ? { customTools: options.tools } : {}),
      mcp,
      madeDirectories,
    });
  } catch (err) {
    await demo?.close();
    throw err;
  }
  const remote = (listen: string) =>
    !isLoopback(listen) && config.tenants.length === 0 && !config.allowRemote;
  for (const [key, listen] of [
    ["listen", config.listen],
    ["metrics.listen", config.metrics.listen],
    ["web.listen", config.web.listen],
  ] as const) {
    if (listen !== undefined && remote(listen)) {
      await demo?.close();
      throw new AgentConfigError(
        `invalid config: ${key}: ${listen} is not a loopback address; configure tenants with tokens, or set allowRemote`,
      );
    }
  }
  let store: Store;
  let running: RunningTelemetry;
  const tracing = tracingFromEnv();
  if (tracing) for (const warning of tracingEnvWarnings()) log.warn({}, warning);
  try {
    running = await startTelemetry(
      {
        metricsListen: config.metrics.listen,
        tenantLabel: config.metrics.tenantLabel,
        tracing,
      },
      log,
    );
  } catch (err) {
    await demo?.close();
    throw err;
  }
  const { telemetry } = running;
  try {
    store = options.store ?? (await createStore(config));
    if (telemetry.metrics.enabled) store = new MeasuredStore(store, telemetry.metrics);
  } catch (err) {
    await running.close();
    await demo?.close();
    throw err;
  }
  const signals = await createSignals(config, log);
  const manager = new SessionManager(store, agents, log, {
    ...(signals ? { signals } : {}),
    ...notificationTargets(config),
    telemetry,
    ...(config.retention.keepFinishedReplies === undefined
      ? {}
      : { keepFinishedReplies: config.retention.keepFinishedReplies }),
    requestIds: {
      perSession: config.retention.requestIdsPerSession,
      ttlMs: config.retention.requestIdTtl,
    },
    limits: config.limits,
    // Nodes sharing a database hold a lease on each session they serve.
    ...(config.database.url === undefined
      ? {}
      : {
          leases: {
            timeoutMs: config.database.leaseTimeout,
            ...(config.database.nodeId === undefined ? {} : { nodeId: config.database.nodeId }),
          },
        }),
  });
  const host = config.listen.slice(0, config.listen.lastIndexOf(":"));
  const streams = { open: 0 };
  const parked = new ParkedGauge(() => countParked(store, agents.keys()));
  telemetry.metrics.observe({
    streams: () => streams.open,
    sessionActors: () => manager.liveActors,
    parkedReplies: () => parked.read(),
  });
  const server = createServer({
    store,
    log,
    authenticate: createAuthenticator(config.tenants),
    maxMessageBytes: config.limits.messageBytes,
    keepalive: config.keepalive.enabled
      ? { timeMs: config.keepalive.time, timeoutMs: config.keepalive.timeout }
      : false,
    ...(tls ? { tls } : {}),
    tracing: telemetry.tracing,
    web: {
      corsOrigins: config.web.corsOrigins,
      ...(options.consoleDir === undefined ? {} : { staticDir: options.consoleDir }),
    },
    agentService: createAgentService(manager, {
      inputsPerSecond: config.limits.inputsPerSecond,
      metrics: telemetry.metrics,
      streams,
    }),
    permissionService: createPermissionService(
      (tenant: string) => new PermissionAdmin(manager, tenant),
    ),
    answerLink: (token, answer) =>
      answerByLink(store, (...args) => manager.apply(...args), token, answer),
    auditService: createAuditService(
      (tenant, filter, signal) => listAudit(store, tenant, filter, signal),
      (tenant, page, signal) => listDeadLetters(store, tenant, page, signal),
    ),
  });
  // The manager, subscribed first, has stopped what would write when this logs and reports.
  const storageFailure = new Promise<StorageFailure>((resolve) =>
    store.onFailure((failure) => {
      log.error(
        { err: failure.cause, data: store.location },
        "storage failed: every write is refused until the server restarts",
      );
      server.notServing();
      resolve(failure);
    }),
  );
  let port: number;
  let webUrl: string | undefined;
  try {
    port = await server.bind(config.listen);
    if (config.web.listen !== undefined) {
      const webPort = await server.bindWeb(config.web.listen);
      const webHost = config.web.listen.slice(0, config.web.listen.lastIndexOf(":"));
      webUrl = `${tls ? "https" : "http"}://${webHost}:${webPort}`;
    }
    // MCP tools join the agents before recovery and before any session loads.
    const [opened, connected] = await Promise.allSettled([store.open(), mcp.connect()]);
    if (opened.status === "rejected") throw opened.reason;
    if (connected.status === "rejected") throw connected.reason;
    await manager.start();
    server.serve();
  } catch (err) {
    await manager.stop();
    await server.shutdown({ graceMs: 0 });
    await mcp.close();
    await running.close();
    await demo?.close();
    throw err;
  }
  return {
    address: `${host}:${port}`,
    port,
    server,
    store,
    metricsUrl: running.metricsUrl,
    webUrl,
    storageFailure,
    liveSessions: () => manager.liveActors,
    async close(options = {}) {
      server.drain();
      await manager.stop(config.shutdownGrace);
      await server.shutdown(options);
      await mcp.close();
      await running.close();
      await demo?.close();
    },
  };
}
