import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { EventBody } from "../../../src/agent/events.js";
import type { StoredEvent, StreamItem } from "../../../src/session/stored-event.js";
import type { ToolCallBlock } from "../../../src/agent/types.js";
import { EventHub } from "../../../src/session/event-hub.js";
import { Visibility } from "../../../src/session/visibility.js";
import { MemoryStore } from "../../../src/store/memory-store.js";
import { captureLog } from "../../helpers/capture-log.js";

function event(seq: number, body: EventBody): StoredEvent {
  return { id: `e${seq}`, seq, sessionId: "s", replyId: "r", createdAt: "", body };
}

const start = (seq: number) => event(seq, { type: "reply_start", name: "a", role: "assistant" });
const callStart = (seq: number) => event(seq, { type: "model_call_start", modelName: "m" });
const textStart = (seq: number) => event(seq, { type: "text_block_start", blockId: "b" });
const delta = (seq: number) => event(seq, { type: "text_block_delta", blockId: "b", delta: "x" });
const toolCall = (seq: number) =>
  event(seq, { type: "tool_call_start", toolCallId: "c", toolCallName: "Bash" });
const toolEnd = (seq: number) =>
  event(seq, { type: "tool_call_end", toolCallId: "c", input: "{}" });
const confirm = (seq: number) => event(seq, { type: "require_user_confirm", toolCalls: [] });

/** A Visibility whose streams record the seqs they were given. */
function shown(ahead = 100): { v: Visibility; given: number[] } {
  const given: number[] = [];
  return { v: new Visibility(0, ahead, { fanOut: (e) => given.push(e.seq) }), given };
}

describe("Visibility: what streams see before it is written", () => {
  it("gives a reply's start at once, before its write", () => {
    const { v, given } = shown();
    v.offer(start(1), 0);
    expect(given).toEqual([1]);
  });

  it("holds the model's events until the start is written, then gives them in order", async () => {
    const { v, given } = shown();
    v.offer(start(1), 0);
    v.offer(callStart(2), 0);
    v.offer(textStart(3), 0);
    await nextTurn();
    expect(given).toEqual([1]);
    v.written([start(1)], [callStart(2), textStart(3)], 1);
    expect(given).toEqual([1, 2, 3]);
  });

  it("gives what was logged during a write after the turn, when the write is awaited", async () => {
    const { v, given } = shown();
    v.offer(start(1), 0);
    v.offer(callStart(2), 0);
    v.written([start(1)], [callStart(2)], 1, true);
    expect(given).toEqual([1]); // an acknowledgement of the start goes first
    await nextTurn();
    expect(given).toEqual([1, 2]);
  });

  it("gives a model call's events at once up to its first delta, the rest after the turn", async () => {
    const { v, given } = shown();
    v.offer(start(1), 0);
    v.written([start(1)], [], 1);
    v.offer(callStart(2), 1);
    expect(given).toEqual([1]); // after the turn in which the model's request is sent
    v.offer(textStart(3), 1);
    v.offer(delta(4), 1);
    expect(given).toEqual([1, 2, 3, 4]); // the first token waits for nothing
    v.offer(delta(5), 1);
    v.offer(delta(6), 1);
    expect(given).toEqual([1, 2, 3, 4]); // later deltas go together, after this turn
    await nextTurn();
    expect(given).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("gives a model call's start after the turn in which it was logged", async () => {
    const { v, given } = shown();
    v.offer(start(1), 0);
    v.written([start(1)], [], 1);
    v.offer(callStart(2), 1);
    expect(given).toEqual([1]);
    await nextTurn();
    expect(given).toEqual([1, 2]);
  });

  it("never gives what changes state before its write, nor anything after it", async () => {
    const { v, given } = shown();
    v.offer(start(1), 0);
    v.written([start(1)], [], 1);
    v.offer(callStart(2), 1);
    v.offer(confirm(3), 1);
    v.offer(delta(4), 1);
    await nextTurn();
    expect(given).toEqual([1, 2]);
    v.written([callStart(2), confirm(3), delta(4)], [], 4);
    expect(given).toEqual([1, 2, 3, 4]);
  });

  it("gives the tool calls the model streams before their write, not what decides them", async () => {
    const { v, given } = shown();
    v.offer(start(1), 0);
    v.written([start(1)], [], 1);
    v.offer(callStart(2), 1);
    v.offer(toolCall(3), 1);
    v.offer(toolEnd(4), 1);
    v.offer(confirm(5), 1);
    await nextTurn();
    expect(given).toEqual([1, 2, 3, 4]);
    v.written([callStart(2), toolCall(3), toolEnd(4), confirm(5)], [], 5);
    expect(given).toEqual([1, 2, 3, 4, 5]);
  });

  it("gives nothing early past `ahead` events beyond the last written one", () => {
    const { v, given } = shown(0);
    v.offer(start(1), 0);
    expect(given).toEqual([]);
    v.written([start(1)], [], 1);
    expect(given).toEqual([1]);
  });
});

describe("EventHub: events shown ahead leave before their write is built", () => {
  /** A hub on a memory store whose batches and attached stream note the order they happen in. */
  async function hubNoting(): Promise<{ hub: EventHub; order: string[] }> {
    const store = new MemoryStore();
    await store.open();
    const order: string[] = [];
    const batch = store.batch.bind(store);
    store.batch = () => {
      order.push("write built");
      return batch();
    };
    const hub = new EventHub(store, "ses_a", 0, captureLog(), { visibleAhead: 16 });
    const { subscriber } = hub.attach(0, new AbortController().signal, () => undefined);
    const push = subscriber.push.bind(subscriber);
    subscriber.push = (item) => {
      if (item.kind === "event") order.push(`shown ${item.event.body.type}`);
      return push(item);
    };
    return { hub, order };
  }

  it("builds a reply start's write after the turn in which the start went to the streams", async () => {
    const { hub, order } = await hubNoting();
    const written = hub.emitWith("r1", [start(1).body], {});
    expect(order).toEqual(["shown reply_start"]);
    await written;
    expect(order).toEqual(["shown reply_start", "write built"]);
  });

  it("builds a synced write at once, with what waited for the turn's end", async () => {
    const { hub, order } = await hubNoting();
    const started = hub.emitWith("r1", [start(1).body], {});
    const parked = hub.emitWith("r1", [toolCall(2).body], { sync: true });
    expect(order).toEqual(["shown reply_start", "write built"]);
    await Promise.all([started, parked]);
    expect(order).toEqual(["shown reply_start", "write built", "shown tool_call_start"]);
  });

  it("builds at once a write whose events wait for it", async () => {
    const { hub, order } = await hubNoting();
    await hub.emitWith("r1", [start(1).body], {});
    await nextTurn(); // the first write's drain has ended
    order.length = 0;
    const written = hub.emitWith("r1", [toolCall(2).body], {});
    expect(order).toEqual(["write built"]);
    await written;
    expect(order).toEqual(["write built", "shown tool_call_start"]);
  });
  it("writes a model call's start logged during a write with the next events, and at once when settled", async () => {
    const { hub, order } = await hubNoting();
    const started = hub.emitWith("r1", [start(1).body], {});
    await nextTurn(); // the start's write is built and in flight
    hub.emit("r1", callStart(2).body);
    await started;
    await nextTurn();
    expect(order.filter((o) => o === "write built")).toHaveLength(1);
    expect(hub.writtenSeq).toBe(1);
    hub.emit("r1", textStart(3).body);
    await nextTurn();
    await hub.settled();
    expect(order.filter((o) => o === "write built")).toHaveLength(2);
    expect(hub.writtenSeq).toBe(3);
    hub.emit("r1", callStart(4).body);
    await nextTurn();
    expect(hub.writing).toBe(true); // alone, it waits for the next write
    await hub.settled();
    expect(order.filter((o) => o === "write built")).toHaveLength(3);
    expect(hub.writtenSeq).toBe(4);
  });
  it("announces a call once when its reply parks while a stream's replay reads the store", async () => {
    const store = new MemoryStore();
    await store.open();
    const hub = new EventHub(store, "ses_a", 0, captureLog(), { visibleAhead: 16 });
    await hub.emitWith("r1", [start(1).body], {});
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const entries = store.entries.bind(store);
    store.entries = async function* (...args: Parameters<typeof entries>) {
      await gate; // the replay waits while the reply parks
      yield* entries(...args);
    } as typeof store.entries;
    const call = {
      type: "tool_call",
      id: "c1",
      name: "Bash",
      input: "{}",
      state: "asking",
    } as ToolCallBlock;
    // Asked for only at the replay's end, when the reply has parked.
    const parked = { replyId: "r1", calls: [call] };
    const { items } = hub.attach(0, new AbortController().signal, () => parked);
    const reading = items.next();
    await hub.emitWith("r1", [{ type: "require_user_confirm", toolCalls: [call] }], { sync: true });
    release();
    const got = [...((await reading).value as StreamItem[])];
    while (got.length < 3) {
      const next = await Promise.race([items.next(), nextTurn().then(() => undefined)]);
      if (!next) break;
      got.push(...(next.value as StreamItem[]));
    }
    const kinds = got.map((i) =>
      i.kind === "event" ? `${i.event.seq} ${i.event.body.type}` : i.kind,
    );
    expect(kinds).toEqual(["1 reply_start", "2 require_user_confirm"]);
  });
});
