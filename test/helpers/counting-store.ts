import { createMemoryStore } from "../../src/store/index.js";
import type { Store } from "../../src/store/store.js";

/**
 * A memory store that records each scan (`entries`) as `<kind>:<gte>`, so a test can tell what a
 * piece of the server read by range.
 */
export function countingStore(): { store: Store; scans: string[] } {
  const inner = createMemoryStore();
  const scans: string[] = [];
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "entries") {
        return (...args: Parameters<Store["entries"]>) => {
          scans.push(`${args[0].kind}:${String(args[1]?.gte ?? "")}`);
          return target.entries(...args);
        };
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === "function"
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
  return { store, scans };
}
