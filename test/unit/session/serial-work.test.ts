import { describe, expect, it } from "vitest";
import { SerialWork } from "../../../src/session/serial-work.js";

/** A promise with its resolve, to hold a step open. */
function gate(): { done: Promise<void>; open: () => void } {
  let open!: () => void;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { done, open };
}

describe("SerialWork", () => {
  it("starts a step at once when none is under way", () => {
    const work = new SerialWork();
    let started = false;
    void work.run(async () => {
      started = true;
      await Promise.resolve();
    });
    expect(started).toBe(true);
  });

  it("runs steps one at a time, in the order given", async () => {
    const work = new SerialWork();
    const order: string[] = [];
    const first = gate();
    const a = work.run(async () => {
      order.push("a starts");
      await first.done;
      order.push("a ends");
    });
    const b = work.run(async () => {
      order.push("b starts");
      await Promise.resolve();
      order.push("b ends");
    });
    const c = work.run(() => {
      order.push("c starts");
      return Promise.resolve("c");
    });
    await Promise.resolve();
    expect(order).toEqual(["a starts"]); // b and c wait for a
    first.open();
    await Promise.all([a, b, c]);
    expect(order).toEqual(["a starts", "a ends", "b starts", "b ends", "c starts"]);
    expect(await c).toBe("c");
  });

  it("rejects a step that throws or fails, and runs the next ones all the same", async () => {
    const work = new SerialWork();
    const thrown = work.run((): Promise<void> => {
      throw new Error("thrown");
    });
    const failed = work.run(() => Promise.reject(new Error("failed")));
    const next = work.run(() => Promise.resolve("next"));
    await expect(thrown).rejects.toThrow("thrown");
    await expect(failed).rejects.toThrow("failed");
    expect(await next).toBe("next");
    await new Promise((resolve) => setImmediate(resolve)); // every step has ended
    let started = false;
    void work.run(() => {
      started = true;
      return Promise.resolve();
    });
    expect(started).toBe(true); // at once again
  });

  it("holds work asked for from within a step until that step has ended", async () => {
    const work = new SerialWork();
    const order: string[] = [];
    let inner: Promise<void> | undefined;
    const outer = work.run(async () => {
      order.push("outer starts");
      inner = work.run(() => {
        order.push("inner starts");
        return Promise.resolve();
      });
      await Promise.resolve();
      await Promise.resolve();
      order.push("outer ends");
    });
    await outer;
    await inner;
    expect(order).toEqual(["outer starts", "outer ends", "inner starts"]);
  });
});
