import type { Store, StoreBatch } from "../../src/store/store.js";
import { nowUs } from "../lib/stats.js";

/** When store operations started and ended (µs on the monotonic clock `nowUs`), by kind. */
export type OpTimes = Record<string, [start: number, end: number][]>;

/**
 * The store's operations, by kind: get, getMany, write, write_sync, and scan (an `entries` range
 * read, from the call to its end). The clock is the machine's monotonic clock, so the times line
 * up with those the benchmark process takes.
 */
export class StoreTimes {
  private samples = new Map<string, [number, number][]>();

  add(kind: string, start: number, end: number): void {
    let list = this.samples.get(kind);
    if (!list) this.samples.set(kind, (list = []));
    list.push([start, end]);
  }

  /** Every operation so far, then forgets them. */
  take(): OpTimes {
    const out = Object.fromEntries(this.samples);
    this.samples = new Map();
    return out;
  }
}

async function timed<T>(times: StoreTimes, kind: string, work: () => Promise<T>): Promise<T> {
  const t0 = nowUs();
  try {
    return await work();
  } finally {
    times.add(kind, t0, nowUs());
  }
}

function timedBatch(batch: StoreBatch, times: StoreTimes): StoreBatch {
  const proxy: StoreBatch = new Proxy(batch, {
    get(target, prop) {
      if (prop === "put" || prop === "del") {
        return (...args: unknown[]) => {
          (target[prop] as (...a: unknown[]) => unknown)(...args);
          return proxy;
        };
      }
      if (prop === "write") {
        return (options?: { sync?: boolean }) =>
          timed(times, options?.sync ? "write_sync" : "write", () => target.write(options));
      }
      return Reflect.get(target, prop, target) as unknown;
    },
  });
  return proxy;
}

/**
 * The store with its reads and writes timed: the embedding API's `store` option, so the server
 * code is untouched. The proxy costs well under a microsecond per call.
 */
export function timedStore(store: Store, times: StoreTimes): Store {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === "get" || prop === "getMany") {
        return (...args: unknown[]) =>
          timed(times, prop, () =>
            (target[prop] as (...a: unknown[]) => Promise<unknown>)(...args),
          );
      }
      if (prop === "batch") return () => timedBatch(target.batch(), times);
      if (prop === "entries") {
        return async function* (...args: unknown[]) {
          const t0 = nowUs();
          try {
            yield* (target.entries as (...a: unknown[]) => AsyncIterable<unknown>)(...args);
          } finally {
            times.add("scan", t0, nowUs());
          }
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? (value as () => unknown).bind(target) : value;
    },
  });
}
