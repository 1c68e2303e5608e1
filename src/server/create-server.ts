import { format } from "node:util";
import {
  Server,
  ServerCredentials,
  setLogger,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import type { TlsMaterial } from "../config/read-tls-files.js";
import { ParkwayError, shuttingDown } from "../common/errors.js";
import type { Logger } from "../common/logger.js";
import type { Tracing } from "../common/telemetry.js";
import { AgentServiceService } from "../generated/parkway/v1/agent_service.js";
import { ServerEvent } from "../generated/parkway/v1/events.js";
import { AuditServiceService } from "../generated/parkway/v1/audit.js";
import { PermissionServiceService } from "../generated/parkway/v1/permission.js";
import type { Store } from "../store/store.js";
import { type AdapterEnv, adaptBidi, adaptServerStream, adaptUnary } from "./adapters.js";
import { type Authenticate, createAuthenticator } from "./auth.js";
import { type AgentServiceHandlers, unimplementedAgentService } from "./agent-service.js";
import { type AuditServiceHandlers, unimplementedAuditService } from "./audit-service.js";
import { ServerShutdownError } from "./call-context.js";
import {
  type PermissionServiceHandlers,
  unimplementedPermissionService,
} from "./permission-service.js";
import { ListenError, listenError } from "../common/listen-error.js";
import { pooledSerializer } from "./pooled-serializer.js";
import { addReflection } from "./reflection.js";
import { transportLimit, withSafeDecoding } from "./request-decoding.js";
import { DEFAULT_CONSOLE_DIR } from "./web/static-files.js";
import type { WebOptions } from "./web/web-options.js";
import type { AnswerLink } from "./web/answer-link.js";
import type { WebServer } from "./web/web-server.js";

export { ListenError };

/** The events of Chat and Watch (one per text delta) are encoded through one reused writer. */
const serializeEvent = pooledSerializer<ServerEvent>((message, writer) =>
  ServerEvent.encode(message, writer),
);
/**
 * The services as served: requests decoded safely (a 64-bit integer beyond a JavaScript number is
 * refused naming its field, a request past `maxBytes` naming the limit; see `withSafeDecoding`).
 */
function servedServices(maxBytes: number) {
  return {
    agent: withSafeDecoding(
      {
        ...AgentServiceService,
        chat: { ...AgentServiceService.chat, responseSerialize: serializeEvent },
        watch: { ...AgentServiceService.watch, responseSerialize: serializeEvent },
      },
      maxBytes,
    ),
    permission: withSafeDecoding(PermissionServiceService, maxBytes),
    audit: withSafeDecoding(AuditServiceService, maxBytes),
  };
}

/** What the server is built from. */
export interface ServerDeps {
  /** The store; `listen` opens it before the server reports SERVING, `shutdown` closes it. */
  store: Store;
  log: Logger;
  agentService?: AgentServiceHandlers;
  permissionService?: PermissionServiceHandlers;
  auditService?: AuditServiceHandlers;
  /**
   * Largest request accepted, in bytes (default 4 MiB): one larger is refused naming
   * `limits.messageBytes`; past twice this, grpc-js refuses it unread and ends the call.
   */
  maxMessageBytes?: number;
  /** Maps call metadata to a principal; default: every call acts for the tenant "default". */
  authenticate?: Authenticate;
  /** TLS for the listener (mTLS when it has `clientCa`); default: plaintext. */
  tls?: TlsMaterial;
  /**
   * HTTP/2 keepalive: ping every connection every `timeMs` and close one whose answer takes longer
   * than `timeoutMs`, ending its streams; false sends no pings. Default: 30 s and 20 s.
   */
  keepalive?: ServerKeepalive | false;
  /** Server spans of every call (see `AdapterEnv.tracing`); default none. */
  tracing?: Tracing;
  /** The web port's CORS origins and console folder (see `ParkwayServer.bindWeb`). */
  web?: WebOptions;
  /** Answers `POST /answers/<token>` on the web port (park notifications' answer links). */
  answerLink?: AnswerLink;
}

/** The server's keepalive pings. */
export interface ServerKeepalive {
  timeMs: number;
  timeoutMs: number;
}

/** Keepalive used when `ServerDeps.keepalive` is unset; a dead peer is found within 50 s. */
export const DEFAULT_SERVER_KEEPALIVE: ServerKeepalive = { timeMs: 30_000, timeoutMs: 20_000 };

/**
 * A Parkway gRPC server. Its life: starting (bound; every call but health and reflection answers
 * UNAVAILABLE "server starting", health NOT_SERVING), serving, draining (new calls answer
 * UNAVAILABLE "server shutting down", health NOT_SERVING; calls in flight and attached streams go
 * on), stopped.
 */
export interface ParkwayServer {
  /**
   * Binds `address` (`HOST:PORT`, port 0 picks one) and answers there as starting. Resolves with
   * the bound port; rejects with `ListenError` naming the address when it cannot be bound.
   */
  bind(address: string): Promise<number>;
  /** Takes calls and reports SERVING; the store must be open. */
  serve(): void;
  /**
   * `bind`, opens the store, then `serve`. If the store cannot be opened the port is released and
   * it rejects.
   */
  listen(address: string): Promise<number>;
  /**
   * Binds the web port on `address` (`HOST:PORT`): every service over Connect (JSON and binary)
   * and gRPC-web through the same handlers, admission, auth, limits and TLS as the gRPC port, and
   * the web console's files at `/`. Call it before `serve`; `shutdown` closes it. Rejects with
   * `ListenError` naming the address when it cannot be bound.
   */
  bindWeb(address: string): Promise<number>;
  /** Stops taking new calls and reports NOT_SERVING (see above); calls in flight go on. */
  drain(): void;
  /**
   * Drains, ends open streams with UNAVAILABLE "server shutting down", waits up to `graceMs` for
   * calls in flight, releases the port, then closes the store. With `drain`, the calls in flight are
   * first given the grace to finish by themselves, and only those still running then are ended.
   */
  shutdown(options?: { graceMs?: number; drain?: boolean }): Promise<void>;
  /** Reports NOT_SERVING from now on, while calls are still answered (health checks then fail). */
  notServing(): void;
}

const SERVICE_NAMES = [
  "",
  "parkway.v1.AgentService",
  "parkway.v1.PermissionService",
  "parkway.v1.AuditService",
];

/**
 * The listener's credentials: plaintext, TLS, or mTLS, where a client without a certificate signed
 * by `clientCa` fails the handshake (the client sees UNAVAILABLE).
 */
function serverCredentials(tls: TlsMaterial | undefined): ServerCredentials {
  if (!tls) return ServerCredentials.createInsecure();
  return ServerCredentials.createSsl(
    tls.clientCa ?? null,
    [{ private_key: tls.key, cert_chain: tls.cert }],
    tls.clientCa !== undefined,
  );
}

/** grpc-js's own messages (such as a failed bind's) go to the log, not to stderr. */
function routeGrpcLog(log: Logger): void {
  const write = (...args: unknown[]) => log.warn({ grpc: format(...args) }, "grpc-js");
  setLogger({ error: write, info: write, debug: write });
}

/** Builds the Parkway server: AgentService, PermissionService, AuditService, health, reflection. */
export function createServer(deps: ServerDeps): ParkwayServer {
  const log = deps.log;
  routeGrpcLog(log);
  const shutdownController = new AbortController();
  let phase: "starting" | "serving" | "draining" = "starting";
  const env: AdapterEnv = {
    log,
    shutdown: shutdownController.signal,
    inFlight: new Set(),
    authenticate: deps.authenticate ?? createAuthenticator([]),
    ...(deps.tracing ? { tracing: deps.tracing } : {}),
    admit() {
      if (phase === "starting") throw new ParkwayError("unavailable", "server starting");
      if (phase === "draining") throw shuttingDown();
    },
  };
  const keepalive = deps.keepalive ?? DEFAULT_SERVER_KEEPALIVE;
  const maxMessageBytes = deps.maxMessageBytes ?? 4 * 1024 * 1024;
  const services = servedServices(maxMessageBytes);
  const server = new Server({
    "grpc.max_receive_message_length": transportLimit(maxMessageBytes),
    // grpc-js pings each connection every keepalive_time_ms and destroys it when an answer takes
    // longer than keepalive_timeout_ms; its calls then see "cancelled" and detach. It answers the
    // clients' pings at any rate: it has no minimum ping interval and no ping strikes.
    ...(keepalive
      ? {
          "grpc.keepalive_time_ms": keepalive.timeMs,
          "grpc.keepalive_timeout_ms": keepalive.timeoutMs,
        }
      : {}),
  });

  const agent = deps.agentService ?? unimplementedAgentService();
  const agentEnv: AdapterEnv = { ...env, service: "parkway.v1.AgentService" };
  const agentImpl: UntypedServiceImplementation = {
    chat: adaptBidi("Chat", agent.chat, agentEnv),
    watch: adaptServerStream("Watch", agent.watch, agentEnv),
    send: adaptUnary("Send", agent.send, agentEnv),
    listMessages: adaptUnary("ListMessages", agent.listMessages, agentEnv),
    reply: adaptUnary("Reply", agent.reply, agentEnv),
    createSession: adaptUnary("CreateSession", agent.createSession, agentEnv),
    getSession: adaptUnary("GetSession", agent.getSession, agentEnv),
    listSessions: adaptUnary("ListSessions", agent.listSessions, agentEnv),
    deleteSession: adaptUnary("DeleteSession", agent.deleteSession, agentEnv),
    listAgents: adaptUnary("ListAgents", agent.listAgents, agentEnv),
  };
  server.addService(services.agent, agentImpl);

  const perms = deps.permissionService ?? unimplementedPermissionService();
  const permEnv: AdapterEnv = { ...env, service: "parkway.v1.PermissionService" };
  const permImpl: UntypedServiceImplementation = {
    listRules: adaptUnary("ListRules", perms.listRules, permEnv),
    addRules: adaptUnary("AddRules", perms.addRules, permEnv),
    removeRule: adaptUnary("RemoveRule", perms.removeRule, permEnv),
    setMode: adaptUnary("SetMode", perms.setMode, permEnv),
    explain: adaptUnary("Explain", perms.explain, permEnv),
  };
  server.addService(services.permission, permImpl);

  const audit = deps.auditService ?? unimplementedAuditService();
  const auditEnv: AdapterEnv = { ...env, service: "parkway.v1.AuditService" };
  server.addService(services.audit, {
    listAuditRecords: adaptUnary("ListAuditRecords", audit.listAuditRecords, auditEnv),
    listDeadLetters: adaptUnary("ListDeadLetters", audit.listDeadLetters, auditEnv),
  });

  const health = new HealthImplementation(
    Object.fromEntries(SERVICE_NAMES.map((name) => [name, "NOT_SERVING" as const])),
  );
  health.addToServer(server);
  addReflection(server);

  let stopped: Promise<void> | undefined;
  let serving = true;
  let web: WebServer | undefined;
  // Loaded only when a web port is bound: Connect and its runtime cost start-up time otherwise.
  const webServer = async (): Promise<WebServer> => {
    const { createWebServer } = await import("./web/web-server.js");
    return (web ??= createWebServer({
      services: [
        { definition: services.agent, handlers: agent, env: agentEnv },
        { definition: services.permission, handlers: perms, env: permEnv },
        { definition: services.audit, handlers: audit, env: auditEnv },
      ],
      maxMessageBytes,
      tls: deps.tls,
      corsOrigins: deps.web?.corsOrigins ?? [],
      staticDir: deps.web?.staticDir ?? DEFAULT_CONSOLE_DIR,
      answerLink: deps.answerLink,
    }));
  };

  const self: ParkwayServer = {
    async bind(address) {
      return new Promise<number>((resolve, reject) =>
        server.bindAsync(address, serverCredentials(deps.tls), (err, bound) =>
          err ? reject(listenError(address, err)) : resolve(bound),
        ),
      );
    },

    async bindWeb(address) {
      try {
        return await (await webServer()).listen(address);
      } catch (err) {
        throw listenError(address, err as Error);
      }
    },

    serve() {
      if (phase !== "starting") return;
      phase = "serving";
      if (serving) for (const name of SERVICE_NAMES) health.setStatus(name, "SERVING");
    },

    async listen(address) {
      const port = await self.bind(address);
      try {
        await deps.store.open();
      } catch (err) {
        server.forceShutdown();
        throw err;
      }
      self.serve();
      return port;
    },

    drain() {
      phase = "draining";
      for (const name of SERVICE_NAMES) health.setStatus(name, "NOT_SERVING");
    },

    notServing() {
      serving = false;
      for (const name of SERVICE_NAMES) health.setStatus(name, "NOT_SERVING");
    },

    shutdown({ graceMs = 5000, drain = false } = {}) {
      stopped ??= (async () => {
        self.drain();
        web?.stopAccepting();
        const drained = new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
        // A ref'd timer, cleared once done: were it the last handle and unref'd, the process would
        // exit with the shutdown's await unsettled.
        let grace: NodeJS.Timeout | undefined;
        const timer = new Promise<void>((resolve) => (grace = setTimeout(resolve, graceMs)));
        try {
          if (drain) await Promise.race([Promise.allSettled([...env.inFlight]), timer]);
          shutdownController.abort(new ServerShutdownError());
          await Promise.race([Promise.allSettled([...env.inFlight]).then(() => drained), timer]);
        } finally {
          clearTimeout(grace);
        }
        server.forceShutdown();
        web?.destroyConnections();
        await deps.store.close();
      })();
      return stopped;
    },
  };
  return self;
}
