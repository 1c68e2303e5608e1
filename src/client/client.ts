import {
  type CallOptions,
  type ChannelCredentials,
  type ChannelOptions,
  Metadata,
} from "@grpc/grpc-js";
import {
  type Agent,
  AgentServiceClient,
  type CreateSessionRequest,
  type ListMessagesResponse,
  type ListSessionsRequest,
  type ListSessionsResponse,
  type ReplyRequest,
  type ReplyResponse,
  type SendRequest,
  type SendResponse,
  type Session,
} from "../generated/parkway/v1/agent_service.js";
import {
  AuditServiceClient,
  type ListAuditRecordsRequest,
  type ListAuditRecordsResponse,
  type ListDeadLettersRequest,
  type ListDeadLettersResponse,
} from "../generated/parkway/v1/audit.js";
import {
  type AddRulesResponse,
  type ExplainRequest,
  type ListRulesRequest,
  type PermissionDecision,
  type PermissionMode,
  type PermissionRule,
  PermissionServiceClient,
} from "../generated/parkway/v1/permission.js";
import { channelCredentials, type TlsOptions } from "./channel-credentials.js";
import { fromServiceError } from "./errors.js";
import { keepaliveChannelOptions, type KeepaliveOptions } from "./keepalive.js";
import { ParkwaySession, type SessionOptions } from "./session.js";
import { watchEvents, type WatchOptions } from "./watch.js";
import type { ServerEvent } from "../generated/parkway/v1/events.js";

/** One input of Send: a ClientEvent's inputs except attach. */
export type SendInput = NonNullable<SendRequest["input"]>;

/** How to reach the server. */
export interface ClientOptions {
  /** Channel credentials; insecure by default (loopback). Give this or `tls`, not both. */
  credentials?: ChannelCredentials;
  /** Connect over TLS (mTLS with `cert` and `key`); `{}` trusts the system's roots. */
  tls?: TlsOptions;
  /** A bearer token sent as `authorization: Bearer …` on every call. */
  token?: string;
  /** Default deadline of unary calls, in ms. */
  timeoutMs?: number;
  /**
   * HTTP/2 keepalive pings while a call is open, so an attached session's quiet stream survives the
   * idle timeouts of load balancers and a dead server is noticed: default every 30 s with a 20 s
   * timeout (`DEFAULT_CLIENT_KEEPALIVE`); set values to change them, or false to send none.
   */
  keepalive?: KeepaliveOptions | false;
  /**
   * Extra metadata for each call, read when the call starts: for example the current W3C
   * `traceparent`, so that the server's spans (and the reply the call starts or resumes) join the
   * caller's trace.
   */
  metadata?: () => Record<string, string>;
  /**
   * Raw grpc-js channel options, laid over the client's own (keepalive). For example, to spread
   * calls over several nodes given as `ipv4:10.0.0.1:50051,10.0.0.2:50051`:
   * `{ "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }) }`.
   */
  channelOptions?: ChannelOptions;
}

/** Per-call options. */
export interface CallSettings {
  signal?: AbortSignal;
  timeoutMs?: number;
}

type Unary<Req, Res> = (
  req: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (err: Error | null, res?: Res) => void,
) => { cancel(): void };

/** A Parkway client: sessions, replies, agents, and the raw generated stubs. */
export class ParkwayClient {
  readonly agentService: AgentServiceClient;
  readonly permissionService: PermissionServiceClient;
  readonly auditService: AuditServiceClient;
  private readonly sessions = new Set<ParkwaySession>();

  constructor(
    readonly address: string,
    private readonly options: ClientOptions = {},
  ) {
    const creds = channelCredentials(options);
    this.agentService = new AgentServiceClient(address, creds, {
      ...keepaliveChannelOptions(options.keepalive),
      ...options.channelOptions,
    });
    this.permissionService = new PermissionServiceClient(address, creds, {
      channelOverride: this.agentService.getChannel(),
    });
    this.auditService = new AuditServiceClient(address, creds, {
      channelOverride: this.agentService.getChannel(),
    });
  }

  /** Call metadata with the bearer token, if any. */
  metadata(): Metadata {
    const md = new Metadata();
    for (const [key, value] of Object.entries(this.options.metadata?.() ?? {})) md.set(key, value);
    if (this.options.token) md.set("authorization", `Bearer ${this.options.token}`);
    return md;
  }

  /** Runs a unary call with metadata, deadline and AbortSignal; rejects with `ParkwayClientError`. */
  unary<Req, Res>(method: Unary<Req, Res>, req: Req, settings: CallSettings = {}): Promise<Res> {
    const timeout = settings.timeoutMs ?? this.options.timeoutMs;
    const callOptions: Partial<CallOptions> =
      timeout === undefined ? {} : { deadline: Date.now() + timeout };
    return new Promise<Res>((resolve, reject) => {
      settings.signal?.throwIfAborted();
      const call = method(req, this.metadata(), callOptions, (err, res) => {
        settings.signal?.removeEventListener("abort", onAbort);
        if (err) reject(fromServiceError(err));
        else resolve(res as Res);
      });
      const onAbort = () => call.cancel();
      settings.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  async createSession(
    request: Partial<CreateSessionRequest> & { agentId: string },
    settings?: CallSettings,
  ): Promise<Session> {
    const res = await this.unary(
      this.agentService.createSession.bind(this.agentService),
      {
        externalTools: [],
        permissionMode: 0,
        workingDirectories: [],
        metadata: undefined,
        agentId: "",
        ...(defined(request) as Partial<CreateSessionRequest>),
      },
      settings,
    );
    return res.session as Session;
  }

  async getSession(sessionId: string, settings?: CallSettings): Promise<Session> {
    const res = await this.unary(
      this.agentService.getSession.bind(this.agentService),
      { sessionId },
      settings,
    );
    return res.session as Session;
  }

  listSessions(
    request: Partial<ListSessionsRequest> = {},
    settings?: CallSettings,
  ): Promise<ListSessionsResponse> {
    return this.unary(
      this.agentService.listSessions.bind(this.agentService),
      { status: 0, agentId: "", pageSize: 0, pageToken: "", ...defined(request) },
      settings,
    );
  }

  async deleteSession(sessionId: string, settings?: CallSettings): Promise<void> {
    await this.unary(
      this.agentService.deleteSession.bind(this.agentService),
      { sessionId },
      settings,
    );
  }

  async listAgents(settings?: CallSettings): Promise<Agent[]> {
    const res = await this.unary(
      this.agentService.listAgents.bind(this.agentService),
      {},
      settings,
    );
    return res.agents;
  }

  /** The unary Reply: one input, run until the reply finishes or parks. */
  reply(
    request: Partial<ReplyRequest> & { sessionId: string },
    settings?: CallSettings,
  ): Promise<ReplyResponse> {
    return this.unary(
      this.agentService.reply.bind(this.agentService),
      { requestId: "", input: undefined, ...defined(request) },
      settings,
    );
  }

  /**
   * The session's events over Watch, for clients without bidi streams (see `WatchOptions`); send
   * inputs with `send`. Events are the same as an attached Chat stream's, without INPUT_ACKs.
   */
  watch(sessionId: string, options: WatchOptions = {}): AsyncGenerator<ServerEvent> {
    return watchEvents(this.agentService, () => this.metadata(), sessionId, options);
  }

  /**
   * Sends one input over Send: resolves with its acknowledgement (the reply it started or named)
   * once applied; rejects with a `ParkwayClientError` carrying the status a Chat acknowledgement
   * would. A retry with the same `requestId` is applied once.
   */
  send(
    sessionId: string,
    input: SendInput,
    requestId = "",
    settings?: CallSettings,
  ): Promise<SendResponse> {
    return this.unary(
      this.agentService.send.bind(this.agentService),
      { sessionId, requestId, input },
      settings,
    );
  }

  /** One page of the session's messages, newest first (the active reply's so far included). */
  listMessages(
    sessionId: string,
    page: { pageSize?: number; pageToken?: string } = {},
    settings?: CallSettings,
  ): Promise<ListMessagesResponse> {
    return this.unary(
      this.agentService.listMessages.bind(this.agentService),
      { sessionId, pageSize: page.pageSize ?? 0, pageToken: page.pageToken ?? "" },
      settings,
    );
  }

  async listRules(
    request: Partial<ListRulesRequest>,
    settings?: CallSettings,
  ): Promise<PermissionRule[]> {
    const res = await this.unary(
      this.permissionService.listRules.bind(this.permissionService),
      { sessionId: "", agentId: "", scope: 0, ...defined(request) },
      settings,
    );
    return res.rules;
  }

  /** Adds rules (each names its scope); duplicates return the rule already stored. */
  addRules(rules: Partial<PermissionRule>[], settings?: CallSettings): Promise<AddRulesResponse> {
    return this.unary(
      this.permissionService.addRules.bind(this.permissionService),
      {
        rules: rules.map((r) => ({
          id: "",
          toolName: "",
          behavior: 0,
          scope: 0,
          source: 0,
          createdBy: "",
          createdAt: undefined,
          sessionId: "",
          agentId: "",
          toolCallId: "",
          ...defined(r),
        })),
      },
      settings,
    );
  }

  async removeRule(ruleId: string, settings?: CallSettings): Promise<PermissionRule> {
    const res = await this.unary(
      this.permissionService.removeRule.bind(this.permissionService),
      { ruleId },
      settings,
    );
    return res.rule as PermissionRule;
  }

  async setMode(
    sessionId: string,
    mode: PermissionMode,
    settings?: CallSettings,
  ): Promise<PermissionMode> {
    const res = await this.unary(
      this.permissionService.setMode.bind(this.permissionService),
      { sessionId, mode },
      settings,
    );
    return res.mode;
  }

  /** What the permission engine would decide for a call, and why. */
  async explain(
    request: Partial<ExplainRequest> & { toolName: string; input: string },
    settings?: CallSettings,
  ): Promise<PermissionDecision> {
    const res = await this.unary(
      this.permissionService.explain.bind(this.permissionService),
      { sessionId: "", agentId: "", ...defined(request) },
      settings,
    );
    return res.decision as PermissionDecision;
  }

  /**
   * One page of the tenant's audit trail (permission decisions and answers), oldest first; pass the
   * response's `nextPageToken` back as `pageToken` for the next page.
   */
  listAuditRecords(
    request: Partial<ListAuditRecordsRequest> = {},
    settings?: CallSettings,
  ): Promise<ListAuditRecordsResponse> {
    return this.unary(
      this.auditService.listAuditRecords.bind(this.auditService),
      { sessionId: "", toolCallId: "", pageSize: 0, pageToken: "", ...defined(request) },
      settings,
    );
  }

  /**
   * One page of the tenant's dead letters, oldest first: park notifications given up after their
   * last attempt, each with its receiver, body and last error.
   */
  listDeadLetters(
    request: Partial<ListDeadLettersRequest> = {},
    settings?: CallSettings,
  ): Promise<ListDeadLettersResponse> {
    return this.unary(
      this.auditService.listDeadLetters.bind(this.auditService),
      { pageSize: 0, pageToken: "", ...defined(request) },
      settings,
    );
  }

  /** Opens a Chat stream attached to a session, replaying events after `afterSeq`. */
  async attach(
    sessionId: string,
    options: Omit<SessionOptions, "metadata"> = {},
  ): Promise<ParkwaySession> {
    const session: ParkwaySession = new ParkwaySession(this.agentService, sessionId, {
      ...options,
      metadata: () => this.metadata(),
      onClose: () => this.sessions.delete(session),
    });
    this.sessions.add(session);
    try {
      await session.attached;
    } catch (err) {
      this.sessions.delete(session);
      throw err;
    }
    return session;
  }

  /** Ends every attached session's stream and closes the channel. */
  close(): void {
    for (const session of this.sessions) session.close();
    this.sessions.clear();
    this.agentService.close();
    this.permissionService.close();
    this.auditService.close();
  }
}

/** Creates a client for a Parkway server at `HOST:PORT`. */
export function createParkwayClient(address: string, options?: ClientOptions): ParkwayClient {
  return new ParkwayClient(address, options);
}

/**
 * `fields` without those set to undefined, which the generated encoders would send as the text
 * "undefined" (a caller without types may pass `{ agentId: undefined }`): they keep their defaults.
 */
function defined<T extends object>(fields: T): T {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as T;
}
