import { describe, expect, it } from "vitest";
import { respond, startCore, TENANT } from "./core.js";

describe("streams attached in the session core", () => {
  it("lets the actor go when a stream ends before its first item was read", async () => {
    const core = await startCore([respond("Hi.")]);
    const id = await core.session();
    const stream = new AbortController();
    const attached = await core.manager.attach(TENANT, id, 0, stream.signal);
    expect(core.manager.liveActors).toBe(1);

    // The stream ends at once: its items generator never started, so it runs no `finally`.
    stream.abort();
    await attached.items.return(undefined);
    attached.detach();

    expect(core.manager.liveActors).toBe(0);
  });

  it("counts each stream once, however often it is detached", async () => {
    const core = await startCore([]);
    const id = await core.session();
    const a = await core.manager.attach(TENANT, id, 0, new AbortController().signal);
    const b = await core.manager.attach(TENANT, id, 0, new AbortController().signal);
    expect(core.manager.liveActors).toBe(1); // one actor for both
    a.detach();
    a.detach();
    expect(core.manager.liveActors).toBe(1); // b still holds it
    b.detach();
    expect(core.manager.liveActors).toBe(0);
  });
});
