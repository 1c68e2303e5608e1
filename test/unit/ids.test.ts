import { describe, expect, it } from "vitest";
import { newId } from "../../src/common/ids.js";

describe("newId", () => {
  it("is prefix_ and 22 base36 characters", () => {
    expect(newId("evt")).toMatch(/^evt_[0-9a-z]{22}$/);
  });

  it("is unique and sorts in creation order across many pool refills", () => {
    const ids = Array.from({ length: 50_000 }, () => newId("x"));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it("uses every character of the random part about equally often", () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 20_000; i += 1) {
      for (const ch of newId("x").slice(-10)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    }
    expect(counts.size).toBe(36);
    const expected = (20_000 * 10) / 36;
    for (const n of counts.values()) expect(Math.abs(n - expected) / expected).toBeLessThan(0.08);
  });
});
