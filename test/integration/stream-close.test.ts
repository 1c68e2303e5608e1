import { afterEach, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../helpers/parkway-harness.js";

/**
 * Closing a session stream ends it without resetting it when the server can end it: the server
 * ends a half-closed stream once the session runs no reply. HTTP/2 servers close the connection of
 * a client that resets streams faster than a rate limit (about 1,000 at once, then 33 a second, a
 * guard against rapid resets), and every other call on that connection would fail.
 */
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("closing session streams", () => {
  it("closes 1,500 streams back to back on one connection, which stays usable", async () => {
    h = await startHarness({ turns: [{ match: { lastUser: "" }, repeat: true, text: "ok" }] });
    const session = await h.client.createSession({ agentId: "test" });
    for (let i = 0; i < 1500; i++) {
      const stream = await h.client.attach(session.id);
      stream.close();
    }
    // A call on the same connection: refused INTERNAL if the server had closed it.
    const got = await h.client.getSession(session.id);
    expect(got.id).toBe(session.id);
    const again = await h.client.attach(session.id);
    again.close();
  }, 60_000);
});
