/**
 * Parks a reply from TypeScript, for the cross-language test of the Python client: creates a
 * session of AGENT on the server at ADDR, sends TEXT, waits until the reply parks, and prints
 * `{"sessionId": ..., "pending": [call ids]}` on stdout.
 *
 * Usage: node --import tsx test/helpers/park-cli.ts ADDR AGENT TEXT
 */
import { createParkwayClient } from "../../src/client/index.js";

const [address, agentId, text] = process.argv.slice(2);
if (!address || !agentId || !text) {
  process.stderr.write("usage: park-cli ADDR AGENT TEXT\n");
  process.exit(2);
}
const client = createParkwayClient(address, { timeoutMs: 20_000 });
const session = await client.createSession({ agentId });
const chat = await client.attach(session.id);
for await (const event of chat.message(text, AbortSignal.timeout(20_000))) {
  if (event.event?.$case === "replyEnd") throw new Error("the reply finished instead of parking");
}
chat.close();
const parked = await client.getSession(session.id);
client.close();
process.stdout.write(
  `${JSON.stringify({ sessionId: session.id, pending: parked.pendingToolCalls.map((c) => c.id) })}\n`,
);
