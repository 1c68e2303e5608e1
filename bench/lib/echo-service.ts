import {
  Server,
  ServerCredentials,
  type ServerDuplexStream,
  type ServiceDefinition,
} from "@grpc/grpc-js";
import { ClientEvent, ServerEvent } from "../../src/generated/parkway/v1/events.js";

/**
 * The bare grpc-js baseline: a bidi method that answers every ClientEvent with one ServerEvent, a
 * copy of the template the client sends in the `x-echo-template-bin` metadata (a real Parkway event,
 * so both directions carry the same message types and sizes as Parkway, through the same ts-proto
 * codec). Only `seq` and `created_at` change per answer.
 */
export const ECHO_PATH = "/parkway.bench.Echo/Chat";
export const TEMPLATE_KEY = "x-echo-template-bin";
/** The bare relay's (bench/servers/model-relay.ts) second template: the event that ends an answer. */
export const RELAY_END_KEY = "x-relay-end-bin";
/** The bare park's (bench/servers/bare-park.ts) templates: REQUIRE_USER_CONFIRM, REPLY_PARKED, REPLY_END. */
export const BARE_PARK_KEYS = ["x-park-require-bin", "x-park-parked-bin", "x-park-end-bin"];

export const EchoService = {
  chat: {
    path: ECHO_PATH,
    requestStream: true,
    responseStream: true,
    originalName: "Chat",
    requestSerialize: (value: ClientEvent): Buffer =>
      Buffer.from(ClientEvent.encode(value).finish()),
    requestDeserialize: (value: Buffer): ClientEvent => ClientEvent.decode(value),
    responseSerialize: (value: ServerEvent): Buffer =>
      Buffer.from(ServerEvent.encode(value).finish()),
    responseDeserialize: (value: Buffer): ServerEvent => ServerEvent.decode(value),
  },
} satisfies ServiceDefinition;

/** The encoded size of a ServerEvent, in bytes. */
export function encodedSize(event: ServerEvent): number {
  return ServerEvent.encode(event).finish().length;
}

/** The template event a bare server's call carries in its metadata under `key` (empty if none). */
export function templateOf(
  call: ServerDuplexStream<ClientEvent, ServerEvent>,
  key: string = TEMPLATE_KEY,
): ServerEvent {
  const raw = call.metadata.get(key)[0];
  return ServerEvent.decode(Buffer.isBuffer(raw) ? raw : Buffer.alloc(0));
}

/** Serves `chat` as the echo service's Chat on a free 127.0.0.1 port (the bench's bare servers). */
export async function serveEcho(
  chat: (call: ServerDuplexStream<ClientEvent, ServerEvent>) => void,
): Promise<{ server: Server; address: string }> {
  const server = new Server();
  server.addService(EchoService, { chat });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
  return { server, address: `127.0.0.1:${port}` };
}
