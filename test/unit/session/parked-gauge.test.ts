import { describe, expect, it } from "vitest";
import { ParkedGauge } from "../../../src/session/parked-count.js";

/** A count that takes `took` ms of a clock the test moves, and says how often it ran. */
function fakeCount(took: number) {
  const clock = { now: 1_000 };
  const state = { calls: 0, parked: 3, fail: false };
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
  it("reuses a count until 50 times what it took has passed since it began", async () => {
    const { clock, state, gauge } = fakeCount(10);
    expect(await gauge.read()).toEqual(new Map([["a", 3]]));
    state.parked = 4;
    clock.now += 480; // 490 ms after the count began: still within 500
    expect(await gauge.read()).toEqual(new Map([["a", 3]]));
    expect(state.calls).toBe(1);
    clock.now += 10;
    expect(await gauge.read()).toEqual(new Map([["a", 4]]));
    expect(state.calls).toBe(2);
  });

  it("counts at every read when counting is quick", async () => {
    const { clock, state, gauge } = fakeCount(0.02);
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
    expect(reads).toEqual([0, 1, 2].map(() => new Map([["a", 3]])));
    expect(state.calls).toBe(1);
  });

  it("keeps no failed count: the next read counts again", async () => {
    const { state, gauge } = fakeCount(10);
    state.fail = true;
    await expect(gauge.read()).rejects.toThrow("store closed");
    state.fail = false;
    expect(await gauge.read()).toEqual(new Map([["a", 3]]));
    expect(state.calls).toBe(2);
  });
});
