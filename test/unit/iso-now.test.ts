import { afterEach, describe, expect, it, vi } from "vitest";
import { isoNow } from "../../src/common/iso-now.js";

describe("isoNow", () => {
  afterEach(() => vi.useRealTimers());

  it("is now's ISO string, made again when the millisecond changes", () => {
    vi.useFakeTimers({ now: new Date("2026-12-04T05:00:00.123Z") });
    expect(isoNow()).toBe("2026-12-04T05:00:00.123Z");
    expect(isoNow()).toBe("2026-12-04T05:00:00.123Z");
    vi.advanceTimersByTime(1);
    expect(isoNow()).toBe("2026-12-04T05:00:00.124Z");
    vi.setSystemTime(new Date("2026-12-04T04:59:59.999Z")); // the clock stepped back
    expect(isoNow()).toBe(new Date().toISOString());
    expect(isoNow()).toBe("2026-12-04T04:59:59.999Z");
  });
});
