/**
 * The temporary PostgreSQL cluster of a benchmark run: the tests' starter (test/helpers/postgres.ts:
 * initdb into a temporary directory, postgres on a free 127.0.0.1 port, fsync on), stopped by
 * `stop()` in the suite's `finally`, and also when the run is interrupted (SIGINT, SIGTERM) or
 * exits before that (the postmaster is then killed at once).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startPostgres, type TestPostgres } from "../../test/helpers/postgres.js";
import { pinServerTree } from "./cores.js";

export type BenchPostgres = TestPostgres;

/** The postmaster's pid, from its pid file (undefined once it is gone). */
function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export async function startBenchPostgres(): Promise<BenchPostgres> {
  const cluster = await startPostgres();
  const postmaster = postmasterPid(cluster.dataDir);
  if (postmaster) pinServerTree(postmaster);
  const kill = () => {
    const pid = postmasterPid(cluster.dataDir);
    try {
      if (pid) process.kill(pid, "SIGQUIT"); // immediate shutdown: ends its children too
    } catch {
      // already gone
    }
  };
  const onSignal = (signal: NodeJS.Signals) => {
    void cluster.stop().finally(() => {
      process.off("exit", kill);
      process.kill(process.pid, signal);
    });
  };
  process.on("exit", kill);
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  return {
    ...cluster,
    async stop() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      await cluster.stop();
      process.off("exit", kill);
    },
  };
}

/**
 * How many times the cluster has flushed its WAL to disk so far (`pg_stat_wal.wal_sync`: commits
 * that waited for the flush, and the WAL writer's own flushes). A backend reports its counts once
 * idle, at most 10 s later, so this waits that long first.
 */
export async function walSyncs(pg: BenchPostgres): Promise<number> {
  await sleep(11_000);
  const [row] = await pg.query<{ n: string }>("SELECT wal_sync::text AS n FROM pg_stat_wal");
  return Number(row?.n ?? Number.NaN);
}
