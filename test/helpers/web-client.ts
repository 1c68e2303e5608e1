import { type DescMessage, type DescService, fromBinary, toBinary } from "@bufbuild/protobuf";
import { createFileRegistry } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { ParkwayClientError, type SessionInput } from "../../src/client/index.js";
import { BadRequest, PreconditionFailure } from "../../src/generated/google/rpc/error_details.js";
import { SendRequest } from "../../src/generated/parkway/v1/agent_service.js";
import { ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { descriptorSet } from "../../src/server/descriptor-set.js";

/** How a web client speaks to the web port. */
export type WebProtocol = "connect" | "connect-binary" | "grpc-web";

const registry = createFileRegistry(descriptorSet());

/** A service's descriptor from the server's descriptor set, e.g. "parkway.v1.AgentService". */
export function serviceDesc(typeName: string): DescService {
  const desc = registry.getService(typeName);
  if (!desc) throw new Error(`no service ${typeName}`);
  return desc;
}

/** A message type's descriptor from the server's descriptor set. */
export function messageDesc(typeName: string): DescMessage {
  const desc = registry.getMessage(typeName);
  if (!desc) throw new Error(`no message ${typeName}`);
  return desc;
}

/** A transport to the web port at `baseUrl` over HTTP/1.1. */
export function webTransport(baseUrl: string, protocol: WebProtocol): Transport {
  return protocol === "grpc-web"
    ? createGrpcWebTransport({ baseUrl, httpVersion: "1.1" })
    : createConnectTransport({
        baseUrl,
        httpVersion: "1.1",
        useBinaryFormat: protocol === "connect-binary",
      });
}

/** A client of one service that takes and gives plain protobuf-es messages (untyped). */
export type UntypedClient = Record<
  string,
  (
    request: unknown,
    options?: { signal?: AbortSignal; headers?: Record<string, string> },
  ) => Promise<Record<string, unknown>> & AsyncIterable<Record<string, unknown>>
>;

/** A client of `service` (e.g. "parkway.v1.AgentService") on the web port. */
export function webClient(baseUrl: string, protocol: WebProtocol, service: string): UntypedClient {
  return createClient(serviceDesc(service), webTransport(baseUrl, protocol));
}

/** The same error a gRPC client reports, from a web client's `ConnectError`. */
export function toClientError(err: unknown): unknown {
  if (!(err instanceof ConnectError)) return err;
  const fields: { field: string; description: string }[] = [];
  const preconditions: { type: string; subject: string; description: string }[] = [];
  for (const detail of err.details) {
    if ("desc" in detail) continue;
    if (detail.type === "google.rpc.BadRequest") {
      fields.push(...BadRequest.decode(detail.value).fieldViolations);
    } else if (detail.type === "google.rpc.PreconditionFailure") {
      preconditions.push(...PreconditionFailure.decode(detail.value).violations);
    }
  }
  return new ParkwayClientError(err.code, err.rawMessage, fields, preconditions);
}

const SEND_REQUEST = "parkway.v1.SendRequest";
const SERVER_EVENT = "parkway.v1.ServerEvent";

/** Parkway's ts-proto ServerEvent from the web client's message. */
export function serverEvent(message: unknown): ServerEvent {
  return ServerEvent.decode(toBinary(messageDesc(SERVER_EVENT), message as never));
}

/** The web client's SendRequest from the ts-proto one (through the wire format both share). */
function sendRequest(sessionId: string, input: SessionInput, requestId: string): unknown {
  if (input.$case === "attach") throw new Error("Send takes no attach");
  const bytes = SendRequest.encode({ sessionId, requestId, input }).finish();
  return fromBinary(messageDesc(SEND_REQUEST), bytes);
}

/** Agent calls on the web port: Send one input, Watch the events. */
export class WebAgentClient {
  readonly agent: UntypedClient;

  constructor(baseUrl: string, protocol: WebProtocol) {
    this.agent = webClient(baseUrl, protocol, "parkway.v1.AgentService");
  }

  async send(sessionId: string, input: SessionInput, requestId: string): Promise<void> {
    try {
      await this.agent.send!(sendRequest(sessionId, input, requestId));
    } catch (err) {
      throw toClientError(err);
    }
  }

  /**
   * The session's events over Watch after `afterSeq`; after UNAVAILABLE (a restart) it watches
   * again after the last seq read, for up to 30 s.
   */
  async *watch(
    sessionId: string,
    afterSeq: number,
    signal: AbortSignal,
  ): AsyncGenerator<ServerEvent> {
    let lastSeq = afterSeq;
    let until: number | undefined;
    while (!signal.aborted) {
      try {
        const request = { sessionId, afterSeq: BigInt(lastSeq) };
        for await (const message of this.agent.watch!(request, { signal })) {
          until = undefined;
          const event = serverEvent(message);
          if (event.seq !== 0) {
            if (event.seq <= lastSeq) continue;
            lastSeq = event.seq;
          }
          yield event;
        }
        return;
      } catch (err) {
        if (signal.aborted) return;
        if (!(err instanceof ConnectError) || err.code !== Code.Unavailable) {
          throw toClientError(err);
        }
        until ??= Date.now() + 30_000;
        if (Date.now() >= until) throw toClientError(err);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }
}
