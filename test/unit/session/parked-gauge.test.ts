import { describe, expect, it } from "vitest";
import { ParkedGauge } from "../../../src/session/parked-count.js";

/** A count that takes `took` ms of a clock the test moves, and says how often it ran. */
function fakeCount(took: number, parked = 4000) {
  const clock = { now: 1_000 };
  const state = { calls: 0, parked, fail: false };
  const count = async (): Promise<ReadonlyMap<string, number>> => {
    state.calls++;
    await Promise.resolve();
    clock.now += took;
    if (state.fail) throw new Error("store closed");
    return new Map([["a", state.parked]]);
  };
  return { clock, state, gauge: new ParkedGauge(count, () => clock.now) };
}

describe("ParkedGauge", () => {
  it("reuses a count for 125 µs per reply it counted, from when it began", async () => {
    const { clock, state, gauge } = fakeCount(10);
    expect(await gauge.read()).toEqual(new Map([["a", 4000]]));
    state.parked = 4001;
    clock.now += 480; // 490 ms after the count began: within 4000 × 0.125 = 500 ms
    expect(await gauge.read()).toEqual(new Map([["a", 4000]]));
    expect(state.calls).toBe(1);
    clock.now += 10;
    expect(await gauge.read()).toEqual(new Map([["a", 4001]]));
    expect(state.calls).toBe(2);
  });

  it("counts at every read when few replies are parked, however long counting took", async () => {
    const { clock, state, gauge } = fakeCount(200, 1);
    for (let parked = 1; parked <= 3; parked++) {
      state.parked = parked;
      clock.now += 1;
      expect(await gauge.read()).toEqual(new Map([["a", parked]]));
    }
    expect(state.calls).toBe(3);
  });

  it("shares a count under way among reads", async () => {
    const { state, gauge } = fakeCount(10);
    const reads = await Promise.all([gauge.read(), gauge.read(), gauge.read()]);
    expect(reads).toEqual([0, 1, 2].map(() => new Map([["a", 4000]])));
    expect(state.calls).toBe(1);
  });

  it("keeps no failed count: the next read counts again", async () => {
    const { state, gauge } = fakeCount(10);
    state.fail = true;
    await expect(gauge.read()).rejects.toThrow("store closed");
    state.fail = false;
    expect(await gauge.read()).toEqual(new Map([["a", 4000]]));
    expect(state.calls).toBe(2);
  });
});
