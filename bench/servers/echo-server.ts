/**
 * Child process: the bare grpc-js bidi echo (see bench/lib/echo-service.ts), nothing else. Every
 * ClientEvent is answered at once with a copy of the stream's template ServerEvent.
 */
import type { ServerDuplexStream } from "@grpc/grpc-js";
import { type ClientEvent, ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { serveIpc } from "../lib/child.js";
import { serveEcho, TEMPLATE_KEY } from "../lib/echo-service.js";

function chat(call: ServerDuplexStream<ClientEvent, ServerEvent>): void {
  const raw = call.metadata.get(TEMPLATE_KEY)[0];
  const template = ServerEvent.decode(Buffer.isBuffer(raw) ? raw : Buffer.alloc(0));
  let seq = template.seq;
  call.on("data", () => {
    seq += 1;
    call.write({ ...template, seq, createdAt: new Date() });
  });
  call.on("end", () => call.end());
  call.on("error", () => undefined);
}

const { server, address } = await serveEcho(chat);

serveIpc(
  { address },
  {
    close: () => server.forceShutdown(),
  },
);
