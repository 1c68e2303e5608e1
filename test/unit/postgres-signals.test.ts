import pg from "pg";
import { afterEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../src/common/logger.js";
import { PgSignals } from "../../src/store/postgres/pg-signals.js";
import { usePostgresStores } from "../helpers/postgres-stores.js";

/** Signals between two nodes by LISTEN/NOTIFY on one database. */
const cluster = usePostgresStores();
const opened: PgSignals[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

async function node(url: string): Promise<PgSignals> {
  const signals = new PgSignals(url, silentLogger);
  opened.push(signals);
  await signals.open();
  return signals;
}

describe("PgSignals", () => {
  it("sends one statement at a time, and every topic signalled meanwhile reaches the other node", async () => {
    const url = await cluster.postgres.createDatabase();
    const [a, b] = [await node(url), await node(url)];
    const topics = Array.from({ length: 60 }, (_, i) => `topic-${i}`);
    const heard = new Set<string>();
    for (const t of topics) b.watch(t, () => heard.add(t));
    const ownHeard: string[] = [];
    a.watch("topic-0", () => ownHeard.push("topic-0"));

    // The queries each client has under way, at most, while the signals go out.
    const inFlight = new Map<object, number>();
    let most = 0;
    const query = pg.Client.prototype.query;
    vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (
      this: pg.Client,
      ...args: unknown[]
    ) {
      const n = (inFlight.get(this) ?? 0) + 1;
      inFlight.set(this, n);
      most = Math.max(most, n);
      const done = () => inFlight.set(this, (inFlight.get(this) ?? 1) - 1);
      const result = (query as (...a: unknown[]) => unknown).apply(this, args);
      if (result instanceof Promise) result.then(done, done);
      else done();
      return result as never;
    });

    // One signal per turn of the event loop: without waiting, each would be a statement of its own.
    for (const t of topics) {
      a.signal(t);
      await new Promise((resolve) => setImmediate(resolve));
    }
    for (let i = 0; i < 200 && heard.size < topics.length; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect([...heard].sort()).toEqual([...topics].sort());
    expect(most).toBe(1);
    // A node's own signals come back from the database and are left out.
    expect(ownHeard).toEqual([]);
  });
});
