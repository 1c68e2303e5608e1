/**
 * Reader of the client rows (bench/suites/clients.ts), TypeScript: reads whole streamed replies from
 * a Parkway server through the TypeScript client or through the raw generated stubs, and reports
 * this process's CPU time for them. One process per side, so the CPU it reports is that side's own.
 * Both sides import the compiled package (dist/), as users run it.
 *
 * argv: ADDRESS MODE REPLIES, MODE one of
 * - "client": createParkwayClient, createSession("bench"), attach, then per reply
 *   `for await (const ev of session.message("stream"))` (the message sent and its input_ack awaited,
 *   then the events until REPLY_END), counting events whose `event.$case` is textBlockDelta.
 * - "stub": the generated ts-proto/grpc-js AgentServiceClient; createSession, one `chat()` call, the
 *   attach written and its input_ack read; per reply the user message is written and the call's
 *   async iterator's `next()` repeats until REPLY_END (the message's input_ack is one of the events
 *   read), counting as the client does.
 *
 * Once attached it reads one reply (warm-up) and prints {"ready": true}. Then each line on stdin runs
 * REPLIES replies back to back and prints one JSON line: {"cpu_s": user + system CPU seconds of this
 * process (process.cpuUsage) during them, "wall_s", "deltas", "replies"}. It exits when stdin
 * closes.
 */
import { credentials } from "@grpc/grpc-js";
import { createInterface } from "node:readline";
import type * as ClientModule from "../../src/client/index.js";
import type * as StubModule from "../../src/generated/parkway/v1/agent_service.js";
import type { ClientEvent, ServerEvent } from "../../src/generated/parkway/v1/events.js";

const [address, mode, repliesArg] = process.argv.slice(2) as [string, string, string];
const replies = Number(repliesArg);
const AGENT = "bench";
const TEXT = "stream";
const dist = (file: string) => new URL(`../../dist/${file}`, import.meta.url).href;

async function viaClient(): Promise<() => Promise<number>> {
  const { createParkwayClient } = (await import(dist("client/index.js"))) as typeof ClientModule;
  const client = createParkwayClient(address);
  const created = await client.createSession({ agentId: AGENT });
  const session = await client.attach(created.id);
  return async () => {
    let deltas = 0;
    for await (const ev of session.message(TEXT)) {
      if (ev.event?.$case === "textBlockDelta") deltas++;
    }
    return deltas;
  };
}

async function viaStub(): Promise<() => Promise<number>> {
  const { AgentServiceClient, CreateSessionRequest } = (await import(
    dist("generated/parkway/v1/agent_service.js")
  )) as typeof StubModule;
  const stub = new AgentServiceClient(address, credentials.createInsecure());
  const sessionId = await new Promise<string>((resolve, reject) =>
    stub.createSession(CreateSessionRequest.fromPartial({ agentId: AGENT }), (err, res) =>
      err ? reject(err) : resolve(res.session!.id),
    ),
  );
  const call = stub.chat();
  const events = call[Symbol.asyncIterator]() as AsyncIterator<ServerEvent>;
  const write = (requestId: string, event: ClientEvent["event"]) =>
    call.write({ sessionId, requestId, event } satisfies ClientEvent);
  write(`attach-${sessionId}`, { $case: "attach", value: { sessionId, afterSeq: 0 } });
  await events.next(); // the attach's input_ack
  let sent = 0;
  return async () => {
    write(`${sessionId}-m${++sent}`, { $case: "userMessage", value: { text: TEXT, content: [] } });
    let deltas = 0;
    for (;;) {
      const step = await events.next();
      if (step.done) throw new Error("the Chat stream ended");
      const ev = step.value;
      if (ev.event?.$case === "textBlockDelta") deltas++;
      else if (ev.event?.$case === "replyEnd") return deltas;
    }
  };
}

const reply = mode === "client" ? await viaClient() : await viaStub();
await reply(); // warm-up
process.stdout.write(`${JSON.stringify({ ready: true, node: process.version })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let deltas = 0;
  for (let k = 0; k < replies; k++) deltas += await reply();
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(c0);
  process.stdout.write(
    `${JSON.stringify({ cpu_s: (cpu.user + cpu.system) / 1e6, wall_s: wall, deltas, replies })}\n`,
  );
}
process.exit(0);
