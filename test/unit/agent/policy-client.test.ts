import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { askPolicy } from "../../../src/agent/policy-client.js";
import { policyConfigSchema } from "../../../src/config/policy-schema.js";

/** A policy service on 127.0.0.1 that answers every request with `status` and `body`. */
async function serve(status: number, body: string) {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(status, { "content-type": "application/json" }).end(body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const config = (url: string) => policyConfigSchema.parse({ url, timeout: "10s" });
const ask = async (url: string) =>
  askPolicy(config(url), { version: 1 }, new AbortController().signal);

describe("askPolicy", () => {
  it("reads an answer, ignoring fields it does not know", async () => {
    const url = await serve(200, JSON.stringify({ decision: "deny", reason: "no", extra: 1 }));
    expect(await ask(url)).toMatchObject({ result: "deny", reason: "no" });
    const bare = await ask(await serve(200, JSON.stringify({ decision: "ask" })));
    expect(bare).toMatchObject({ result: "ask" });
    expect(bare!.reason).toBeUndefined();
  });

  it("reads the decision in any case: DENY denies, rather than failing into onError", async () => {
    for (const [decision, result] of [
      ["DENY", "deny"],
      ["Ask", "ask"],
      ["ALLOW", "allow"],
    ]) {
      const answer = await ask(await serve(200, JSON.stringify({ decision })));
      expect(answer).toMatchObject({ result });
    }
  });

  it("takes a null reason, as many encoders write an absent one, for no reason", async () => {
    const url = await serve(200, JSON.stringify({ decision: "deny", reason: null }));
    const answer = await ask(url);
    expect(answer).toMatchObject({ result: "deny" });
    expect(answer!.reason).toBeUndefined();
  });

  it.each([
    [500, "{}", "answered HTTP 500"],
    [200, "not json", "answered a body that is not JSON"],
    [200, JSON.stringify({ decision: "maybe" }), "answered an invalid body (decision: "],
    [200, JSON.stringify({ verdict: "allow" }), "answered an invalid body (decision: "],
    [
      200,
      JSON.stringify({ decision: "allow", pad: "x".repeat(70_000) }),
      "answered more than 65536 bytes",
    ],
  ])("turns status %i with body %s into an error naming it", async (status, body, reason) => {
    const answer = await ask(await serve(status, body));
    expect(answer!.result).toBe("error");
    expect(answer!.reason).toContain(reason);
    expect(answer!.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it("names a connection that fails", async () => {
    const url = await serve(200, "{}");
    await closers.pop()!(); // nothing listens there any more
    const answer = await ask(url);
    expect(answer).toMatchObject({ result: "error", reason: "unreachable (ECONNREFUSED)" });
  });

  it("resolves undefined when the reply's signal aborts first", async () => {
    const controller = new AbortController();
    controller.abort();
    const url = await serve(200, JSON.stringify({ decision: "allow" }));
    expect(await askPolicy(config(url), {}, controller.signal)).toBeUndefined();
  });
});
