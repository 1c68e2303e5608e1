import {
  type DescMessage,
  type DescMethod,
  type DescService,
  fromBinary,
  toBinary,
} from "@bufbuild/protobuf";
import { createFileRegistry } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import type { AdapterEnv } from "../call-lifecycle.js";
import { descriptorSet } from "../descriptor-set.js";
import { type MessageCodec, webServerStream, webUnary } from "./web-adapters.js";

/** A method of a grpc-js service definition, as ts-proto generates it. */
interface GrpcMethodDefinition {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestDeserialize(bytes: Buffer): unknown;
  responseSerialize(message: unknown): Buffer;
}

/** A service served on the web port: its generated grpc-js definition and the port's handlers. */
export interface WebService {
  /** E.g. `AgentServiceService` from src/generated. */
  definition: Record<string, GrpcMethodDefinition>;
  /** The same handler object the gRPC port serves, keyed as the definition is. */
  handlers: object;
  /** The gRPC port's adapter environment of the service (admission, auth, shutdown, in flight). */
  env: AdapterEnv;
}

/** What a bidi method (Chat) answers on the web port: what to use instead. */
const BIDI_INSTEAD =
  "needs a bidirectional stream, which the web port does not serve: use Watch for the events and Send for the inputs, or Chat on the gRPC port";

/**
 * The web port's messages are protobuf-es messages of the descriptor set's types; the handlers take
 * and give ts-proto messages. Both sides speak the same wire format, so each converts through it.
 */
function codecOf(
  method: DescMethod,
  grpc: GrpcMethodDefinition,
): MessageCodec<unknown, unknown, unknown, unknown> {
  const input: DescMessage = method.input;
  const output: DescMessage = method.output;
  return {
    request: (message) => grpc.requestDeserialize(Buffer.from(toBinary(input, message as never))),
    response: (message) => fromBinary(output, grpc.responseSerialize(message)),
  };
}

let registry: ReturnType<typeof createFileRegistry> | undefined;

/** The service's descriptor, from the descriptor set the server ships. */
function serviceDesc(typeName: string): DescService {
  registry ??= createFileRegistry(descriptorSet());
  const desc = registry.getService(typeName);
  if (!desc) throw new Error(`the descriptor set has no service ${typeName}`);
  return desc;
}

/** Registers every method of `service` on `router`, each calling the service's own handler. */
function addService(router: ConnectRouter, service: WebService): void {
  for (const [key, grpc] of Object.entries(service.definition)) {
    const [, serviceName, methodName] = /^\/([^/]+)\/([^/]+)$/.exec(grpc.path) ?? [];
    if (!serviceName || !methodName) throw new Error(`unexpected method path ${grpc.path}`);
    const method = serviceDesc(serviceName).methods.find((m) => m.name === methodName);
    if (!method) throw new Error(`the descriptor set has no method ${grpc.path}`);
    const handler = (service.handlers as Record<string, unknown>)[key] as never;
    const codec = codecOf(method, grpc);
    const env = { ...service.env, service: serviceName };
    if (grpc.requestStream) {
      const refusal = () => {
        throw new ConnectError(`${serviceName}.${methodName} ${BIDI_INSTEAD}`, Code.Unimplemented);
      };
      router.rpc(method, refusal as never);
    } else if (grpc.responseStream) {
      router.rpc(method, webServerStream(methodName, handler, env, codec) as never);
    } else {
      router.rpc(method, webUnary(methodName, handler, env, codec) as never);
    }
  }
}

/** The routes of the web port: every method of every service, through the same handlers. */
export function connectRoutes(services: readonly WebService[]): (router: ConnectRouter) => void {
  return (router) => {
    for (const service of services) addService(router, service);
  };
}
