/**
 * Child process: the bare relay, the least a server between a gRPC client and a model can do. The
 * Chat bidi method of the echo service (bench/lib/echo-service.ts): each ClientEvent makes it POST
 * the request body it was last given (`body`) to the scripted model over a keep-alive node:http
 * agent, split the streamed answer into server-sent events, and send one TEXT_BLOCK_DELTA carrying
 * the first text delta as soon as it arrives, then a REPLY_END once the answer is done. The two
 * events are copies of templates the client sends in the call's metadata (Parkway's own events).
 * No session, no history, no store: the hops a model call takes through any server, and their cost
 * on this machine.
 */
import { Agent, request } from "node:http";
import type { ServerDuplexStream } from "@grpc/grpc-js";
import type { ClientEvent, ServerEvent } from "../../src/generated/parkway/v1/events.js";
import { serveIpc } from "../lib/child.js";
import { RELAY_END_KEY, serveEcho, templateOf } from "../lib/echo-service.js";

const agent = new Agent({ keepAlive: true });
let target: URL | undefined;
let payload = "";

/** The text of the first content delta among the server-sent events of `part`, if any. */
function firstText(part: string): string | undefined {
  if (!part.startsWith("data: ") || part.startsWith("data: [DONE]")) return undefined;
  const chunk = JSON.parse(part.slice(6)) as { choices?: { delta?: { content?: string } }[] };
  const text = chunk.choices?.[0]?.delta?.content;
  return text ? text : undefined;
}

function relay(call: ServerDuplexStream<ClientEvent, ServerEvent>): void {
  const delta = templateOf(call);
  const end = templateOf(call, RELAY_END_KEY);
  let seq = delta.seq;
  const send = (event: ServerEvent) => {
    seq += 1;
    call.write({ ...event, seq, createdAt: new Date() });
  };
  call.on("data", () => {
    if (!target) {
      call.destroy(new Error("the relay was given no request body (`body`)"));
      return;
    }
    const req = request(
      target,
      { method: "POST", agent, headers: { "content-type": "application/json" } },
      (res) => {
        res.setEncoding("utf8");
        let tail = "";
        let sent = false;
        res.on("data", (text: string) => {
          const parts = (tail + text).split("\n\n");
          tail = parts.pop() ?? "";
          for (const part of parts) {
            const first = sent ? undefined : firstText(part);
            if (first === undefined || delta.event?.$case !== "textBlockDelta") continue;
            sent = true;
            send({
              ...delta,
              event: { ...delta.event, value: { ...delta.event.value, delta: first } },
            });
          }
        });
        res.on("end", () => send(end));
      },
    );
    req.on("error", (err) => call.destroy(err));
    req.end(payload);
  });
  call.on("end", () => call.end());
  call.on("error", () => undefined);
}

const { server, address } = await serveEcho(relay);

serveIpc(
  { address },
  {
    /** The model's URL and the request body the next messages send. */
    body: (arg) => {
      const { url, body } = arg as { url: string; body: unknown };
      target = new URL(`${url}/chat/completions`);
      payload = JSON.stringify({ ...(body as object), stream: true });
    },
    close: () => server.forceShutdown(),
  },
);
