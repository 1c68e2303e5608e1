import { describe, expect, it } from "vitest";
import {
  type GaugeSources,
  type Metrics,
  noTracing,
  type TokenCounts,
} from "../../../src/common/telemetry.js";
import { countParked } from "../../../src/session/parked-count.js";
import type { StoredEvent } from "../../../src/session/stored-event.js";
import { respond, startCore, TENANT } from "./core.js";

/** Metrics that remember every measurement, in order. */
class RecordedMetrics implements Metrics {
  readonly enabled = true;
  readonly calls: [string, ...unknown[]][] = [];
  replyEnded(agent: string, outcome: string, tenant: string) {
    this.calls.push(["replyEnded", agent, outcome, tenant]);
  }
  parkAnswered(kind: string, seconds: number) {
    this.calls.push(["parkAnswered", kind, seconds]);
  }
  modelCall(
    call: { agent: string; model: string },
    seconds: number,
    first: number | undefined,
    tokens: TokenCounts,
  ) {
    this.calls.push(["modelCall", call.agent, call.model, seconds, first, tokens]);
  }
  toolCall(tool: string, state: string, seconds: number | undefined) {
    this.calls.push(["toolCall", tool, state, seconds]);
  }
  permissionDecision(behavior: string, check: string) {
    this.calls.push(["permissionDecision", behavior, check]);
  }
  policyDecision(result: string, seconds: number) {
    this.calls.push(["policyDecision", result, seconds]);
  }
  notification(event: string, result: string) {
    this.calls.push(["notification", event, result]);
  }
  inputAcked(code: string) {
    this.calls.push(["inputAcked", code]);
  }
  storeOperation() {}
  observe(_sources: GaugeSources) {}
  named(name: string) {
    return this.calls.filter((c) => c[0] === name);
  }
}

const touch = { id: "m1", name: "Bash", input: { command: "touch metered.txt" } };
const usage = { inputTokens: 10, outputTokens: 2, cacheReadTokens: 4, cacheWriteTokens: 0 };
const parkedOn = (e: StoredEvent) => e.body.type === "reply_parked";
const endedOn = (e: StoredEvent) => e.body.type === "reply_end";

describe("a reply's metrics in the session core", () => {
  it("measures a reply parked, answered after its actor left memory, and completed", async () => {
    const metrics = new RecordedMetrics();
    const core = await startCore(
      [respond("", [touch], usage), respond("done", [], usage)],
      undefined,
      {
        telemetry: { metrics, tracing: noTracing },
      },
    );
    const id = await core.session();
    const applied = await core.manager.apply(TENANT, id, { kind: "user_message", text: "go" });
    const parked = await core.events(id, parkedOn);
    const ask = parked.find((e) => e.body.type === "require_user_confirm");
    const callId = ask?.body.type === "require_user_confirm" ? ask.body.toolCalls[0]!.id : "";
    expect(await countParked(core.store, ["a", "b"])).toEqual(
      new Map([
        ["a", 1],
        ["b", 0],
      ]),
    );
    // Nothing holds the session now: the answer loads it again from the store.
    expect(core.manager.liveActors).toBe(0);
    expect(metrics.named("permissionDecision")).toEqual([
      ["permissionDecision", "ask", "mode.default"],
    ]);

    await core.manager.apply(TENANT, id, {
      kind: "confirm",
      replyId: applied.replyId!,
      answers: [{ toolCallId: callId, confirmed: true, rules: [], reason: "" }],
    });
    await core.events(id, endedOn, parked.at(-1)!.seq);

    expect(await countParked(core.store, ["a"])).toEqual(new Map([["a", 0]]));
    const waits = metrics.named("parkAnswered");
    expect(waits).toHaveLength(1);
    expect(waits[0]![1]).toBe("confirm");
    expect(waits[0]![2]).toBeGreaterThanOrEqual(0);
    const tools = metrics.named("toolCall");
    expect(tools).toHaveLength(1);
    expect(tools[0]!.slice(1, 3)).toEqual(["Bash", "success"]);
    expect(typeof tools[0]![3]).toBe("number"); // it ran after the answer: its time is its own
    const models = metrics.named("modelCall");
    expect(models.map((c) => c.slice(1, 3))).toEqual([
      ["a", "fake"],
      ["a", "fake"],
    ]);
    for (const call of models) expect(call[5]).toEqual(usage);
    // The second call streamed text: its first token is measured, within the call.
    expect(models[1]![4]).toBeLessThanOrEqual(models[1]![3] as number);
    expect(metrics.named("replyEnded")).toEqual([["replyEnded", "a", "completed", TENANT]]);
  });

  it("counts a parked reply that is interrupted once, and takes it out of the parked count", async () => {
    const metrics = new RecordedMetrics();
    const core = await startCore([respond("", [touch])], undefined, {
      telemetry: { metrics, tracing: noTracing },
    });
    const id = await core.session();
    const applied = await core.manager.apply(TENANT, id, { kind: "user_message", text: "go" });
    const parked = await core.events(id, parkedOn);
    await core.manager.apply(TENANT, id, { kind: "user_interrupt", replyId: applied.replyId! });
    await core.events(id, endedOn, parked.at(-1)!.seq);
    expect(metrics.named("replyEnded")).toEqual([["replyEnded", "a", "interrupted", TENANT]]);
    expect(metrics.named("parkAnswered")).toEqual([]);
    // The interrupted call ends without having run: its result starts and ends at once.
    const tools = metrics.named("toolCall");
    expect(tools.map((c) => c.slice(0, 3))).toEqual([["toolCall", "Bash", "interrupted"]]);
    expect(tools[0]![3]).toBeTypeOf("number");
    expect(await countParked(core.store, [])).toEqual(new Map());
  });
});
