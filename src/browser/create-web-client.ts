import {
  type Code,
  ConnectError,
  createClient,
  type Client,
  type Interceptor,
} from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  AgentService,
  type SendRequestSchema,
  type SendResponse,
} from "../generated-es/parkway/v1/agent_service_pb.js";
import { AuditService } from "../generated-es/parkway/v1/audit_pb.js";
import type { ServerEvent } from "../generated-es/parkway/v1/events_pb.js";
import { PermissionService } from "../generated-es/parkway/v1/permission_pb.js";
import { newRequestId } from "./request-id.js";
import { watchSession, type WatchOptions } from "./watch-session.js";

/** Where the web port is and who calls it. */
export interface WebClientOptions {
  /** The web port's URL, e.g. "http://127.0.0.1:8081" or "" for the page's own origin. */
  baseUrl: string;
  /** A bearer token sent as `authorization: Bearer …`; a function is read on every call. */
  token?: string | (() => string | undefined);
  /** "connect" (the default; JSON unless `binary`) or "grpc-web" (always binary). */
  protocol?: "connect" | "grpc-web";
  /** Protobuf binary instead of JSON on the Connect protocol. */
  binary?: boolean;
  /** The fetch to use; default the global one. */
  fetch?: typeof globalThis.fetch;
}

/**
 * One input of Send: the oneof of SendRequest, e.g. `{ case: "userMessage", value: { text } }`
 * (plain objects, or messages made by the input builders).
 */
export type SendInput = MessageInitShape<typeof SendRequestSchema>["input"];

/** Parkway's services over Connect or gRPC-web, and helpers for a session's events and inputs. */
export interface WebClient {
  readonly agent: Client<typeof AgentService>;
  readonly permission: Client<typeof PermissionService>;
  readonly audit: Client<typeof AuditService>;
  /** A session's events after `afterSeq`, reconnecting after the last seq read (see watchSession). */
  watch(sessionId: string, options?: WatchOptions): AsyncGenerator<ServerEvent>;
  /**
   * Sends one input with a request id (a new random one unless given), so that a retry of the same
   * call is applied once. Rejects with the ConnectError the server answers for a refused input.
   */
  send(sessionId: string, input: SendInput, requestId?: string): Promise<SendResponse>;
}

function bearer(token: WebClientOptions["token"]): Interceptor {
  return (next) => (request) => {
    const value = typeof token === "function" ? token() : token;
    if (value) request.header.set("authorization", `Bearer ${value}`);
    return next(request);
  };
}

/** A client of Parkway's web port for browsers (and any runtime with fetch). */
export function createWebClient(options: WebClientOptions): WebClient {
  const transportOptions = {
    baseUrl: options.baseUrl,
    interceptors: [bearer(options.token)],
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  const transport =
    options.protocol === "grpc-web"
      ? createGrpcWebTransport(transportOptions)
      : createConnectTransport({ ...transportOptions, useBinaryFormat: options.binary ?? false });
  const agent = createClient(AgentService, transport);
  return {
    agent,
    permission: createClient(PermissionService, transport),
    audit: createClient(AuditService, transport),
    watch: (sessionId, watchOptions) => watchSession(agent, sessionId, watchOptions),
    send: (sessionId, input, requestId = newRequestId()) =>
      agent.send({ sessionId, requestId, input }),
  };
}

/** True when `err` is a ConnectError with `code`. */
export function hasCode(err: unknown, code: Code): boolean {
  return err instanceof ConnectError && err.code === code;
}
