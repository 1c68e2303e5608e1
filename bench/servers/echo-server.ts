/**
 * Child process: the bare grpc-js bidi echo (see bench/lib/echo-service.ts), nothing else. Every
 * ClientEvent is answered at once with a copy of the stream's template ServerEvent.
 */
import type { ServerDuplexStream } from "@grpc/grpc-js";
import type { ClientEvent, ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { serveIpc } from "../lib/child.js";
import { serveEcho, templateOf } from "../lib/echo-service.js";

function chat(call: ServerDuplexStream<ClientEvent, ServerEvent>): void {
  const template = templateOf(call);
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
