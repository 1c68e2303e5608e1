/**
 * Holds Chat streams open, for the keepalive tests: attaches COUNT streams to SESSION on the server
 * at ADDR, prints `attached COUNT` on stdout, then idles until it is killed. The client pings every
 * KEEPALIVE_MS when given (its default otherwise). Streams do not reconnect: when one breaks it
 * prints `broken <status>: <message>` and exits with 1.
 *
 * Usage: node --import tsx test/helpers/attach-cli.ts ADDR SESSION COUNT [KEEPALIVE_MS]
 */
import { createParkwayClient, type ParkwayClientError } from "../../src/client/index.js";

const [address, sessionId, countText, keepaliveText] = process.argv.slice(2);
const count = Number(countText);
if (!address || !sessionId || !Number.isInteger(count) || count < 1) {
  process.stderr.write("usage: attach-cli ADDR SESSION COUNT [KEEPALIVE_MS]\n");
  process.exit(2);
}
const keepaliveMs = keepaliveText === undefined ? undefined : Number(keepaliveText);
const client = createParkwayClient(address, {
  timeoutMs: 20_000,
  ...(keepaliveMs === undefined ? {} : { keepalive: { timeMs: keepaliveMs } }),
});
const sessions = await Promise.all(
  Array.from({ length: count }, () => client.attach(sessionId, { reconnectForMs: 0 })),
);
process.stdout.write(`attached ${sessions.length}\n`);
for (const session of sessions) {
  void (async () => {
    try {
      for await (const event of session) void event;
      process.stdout.write("broken: the stream ended\n");
    } catch (err) {
      const e = err as ParkwayClientError;
      process.stdout.write(`broken ${e.codeName}: ${e.message}\n`);
    }
    process.exit(1);
  })();
}
setInterval(() => {}, 60_000);
