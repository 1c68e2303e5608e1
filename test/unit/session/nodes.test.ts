import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../../../src/session/stored-event.js";
import { TenantCountRecord } from "../../../src/session/records.js";
import { LeaseRecord } from "../../../src/session/session-leases.js";
import { MemoryStore } from "../../../src/store/memory-store.js";
import { SignalBus, type StoreSignals } from "../../../src/store/signals.js";
import { type Core, FakeModel, hang, respond, startCore, TENANT, type Turn } from "./core.js";

const touch = { id: "m1", name: "Bash", input: { command: "touch parked.txt" } };
const endOf = (e: StoredEvent) => e.body.type === "reply_end";
const parkedOn = (e: StoredEvent) => e.body.type === "reply_parked";

/** Signals that never arrive (every notification lost). */
const lost: StoreSignals = {
  open: () => Promise.resolve(),
  signal: () => undefined,
  watch: () => () => undefined,
  close: () => Promise.resolve(),
};

/** Two nodes on one store, with one model and signals between them (`lost`: every one lost). */
async function twoNodes(turns: Turn[], lostSignals = false): Promise<[Core, Core]> {
  const bus = new SignalBus();
  const signals = () => (lostSignals ? lost : bus.node());
  const store = new MemoryStore();
  const model = new FakeModel(turns);
  const leases = { timeoutMs: 1000 };
  const a = await startCore([], store, { model, signals: signals(), leases });
  const b = await startCore([], store, { model, signals: signals(), leases });
  return [a, b];
}

/** Two nodes, and a reply parked through the first on one Bash call. */
async function parkedThroughA() {
  const [a, b] = await twoNodes([respond("", [touch]), respond("Done.")]);
  const id = await a.session();
  const started = await a.manager.apply(TENANT, id, { kind: "user_message", text: "go" });
  const parked = await a.events(id, parkedOn);
  const ask = parked.find((e) => e.body.type === "require_user_confirm")!;
  const callId = ask.body.type === "require_user_confirm" ? ask.body.toolCalls[0]!.id : "";
  return { a, b, id, started, parked, callId };
}

const seqs = (events: StoredEvent[]) => events.map((e) => e.seq);
const types = (events: StoredEvent[]) => events.map((e) => e.body.type);

describe("several nodes on one store", () => {
  it("streams a reply running on one node to a stream attached to another, in seq order", async () => {
    const [a, b] = await twoNodes([respond("Hello from A.")]);
    const id = await a.session();
    const seen = b.events(id, endOf);

    await a.manager.apply(TENANT, id, { kind: "user_message", text: "hi" });
    const events = await seen;

    expect(types(events)[0]).toBe("reply_start");
    expect(types(events).at(-1)).toBe("reply_end");
    expect(seqs(events)).toEqual(events.map((_, i) => i + 1));
    // The stream on B holds no actor (and no lease): B never served the session.
    expect(b.manager.liveActors).toBe(0);
  });

  it("delivers every event even when every signal is lost (streams also read on a timer)", async () => {
    const [a, b] = await twoNodes([respond("One."), respond("Two.")], true);
    const id = await a.session();
    const seen = b.events(id, (e) => e.body.type === "reply_end" && e.seq > 10);

    await a.manager.apply(TENANT, id, { kind: "user_message", text: "one" });
    await a.events(id, endOf);
    await b.manager.apply(TENANT, id, { kind: "user_message", text: "two" });
    const events = await seen;

    expect(seqs(events)).toEqual(events.map((_, i) => i + 1));
    expect(types(events).filter((t) => t === "reply_end")).toHaveLength(2);
  });

  it("forwards an interrupt sent to one node to the node running the reply", async () => {
    const [a, b] = await twoNodes([hang]);
    const id = await a.session();
    const applied = await a.manager.apply(TENANT, id, { kind: "user_message", text: "think" });
    expect(a.manager.liveActors).toBe(1); // A runs the reply and holds the session's lease

    await b.manager.apply(TENANT, id, { kind: "user_interrupt", replyId: applied.replyId! });
    const events = await b.events(id, endOf);

    const end = events.at(-1)!;
    expect(end.body).toMatchObject({ type: "reply_end", finishedReason: "interrupted" });
    expect(b.manager.liveActors).toBe(0);
  });

  it("refuses a forwarded input exactly as the serving node does", async () => {
    const [a, b] = await twoNodes([hang]);
    const id = await a.session();
    const applied = await a.manager.apply(TENANT, id, { kind: "user_message", text: "think" });

    const refused = await b.manager
      .apply(TENANT, id, { kind: "user_message", text: "again" })
      .catch((e: unknown) => e);
    const direct = await a.manager
      .apply(TENANT, id, { kind: "user_message", text: "again" })
      .catch((e: unknown) => e);

    expect(refused).toMatchObject({ code: (direct as { code: string }).code });
    expect(String(refused)).toBe(String(direct));
    await a.manager.apply(TENANT, id, { kind: "user_interrupt", replyId: applied.replyId! });
  });

  it("resumes a reply parked through one node on another, once per request id", async () => {
    const { a, b, id, started, parked, callId } = await parkedThroughA();
    expect(a.manager.liveActors).toBe(0); // parked: no actor in use
    await sleep(300); // A keeps the lease a quarter of its timeout after the park (lingering)
    // Released: expired at once, its token kept for the next holder's to be greater.
    expect(Date.parse((await a.store.get(LeaseRecord, id))!.expiresAt)).toBeLessThan(Date.now());

    const confirm = {
      kind: "confirm" as const,
      replyId: started.replyId!,
      answers: [{ toolCallId: callId, confirmed: true, rules: [], reason: "" }],
    };
    const first = await b.manager.apply(TENANT, id, confirm, { requestId: "r1" });
    const events = await a.events(id, endOf, parked.at(-1)!.seq);
    const again = await a.manager.apply(TENANT, id, confirm, { requestId: "r1" });

    expect(first.duplicate).toBeUndefined();
    expect(types(events)).toContain("tool_result_end");
    expect(events.at(-1)!.body).toMatchObject({ type: "reply_end", finishedReason: "completed" });
    expect(again.duplicate).toBe(true);
    expect((await again.firstOutcome?.())?.status).toBe("idle");
    expect(a.model.requests).toHaveLength(2); // the answer resumed the reply once
  });

  it("applies a forwarded input itself once the lease of the node that died expired", async () => {
    const { a, b, id, started, callId } = await parkedThroughA();
    // A node that took the session, then died: its lease runs out in a moment.
    const expiresAt = new Date(Date.now() + 300).toISOString();
    await a.store.batch().put(LeaseRecord, id, { node: "gone", token: 7, expiresAt }).write();

    const applied = await b.manager.apply(TENANT, id, {
      kind: "confirm",
      replyId: started.replyId!,
      answers: [{ toolCallId: callId, confirmed: true, rules: [], reason: "" }],
    });
    const outcome = await applied.firstOutcome?.();

    expect(outcome?.status).toBe("idle");
    expect(outcome?.message.content).toContainEqual(
      expect.objectContaining({ type: "text", text: "Done." }),
    );
    expect(a.model.requests).toHaveLength(2);
  });

  it("keeps each tenant's rules and session count one across nodes", async () => {
    const [a, b] = await twoNodes([]);
    const rule = { toolName: "Bash", ruleContent: "ls", behavior: "allow" as const };
    const { stored } = await a.manager.rules(TENANT).add([{ rule, key: { scope: "tenant" } }]);
    expect((await b.manager.rules(TENANT).list({ scope: "tenant" })).map((r) => r.id)).toEqual([
      stored[0]!.id,
    ]);
    // Revoked through B, the rule no longer decides on A.
    await b.manager.rules(TENANT).remove(stored[0]!.id);
    expect(await a.manager.rules(TENANT).list({ scope: "tenant" })).toEqual([]);

    const ids = await Promise.all([a.session(), b.session(), a.session(), b.session()]);
    await a.manager.delete(TENANT, ids[1]);
    expect(await a.store.get(TenantCountRecord, TENANT)).toEqual({ sessions: 3 });
  });
});
