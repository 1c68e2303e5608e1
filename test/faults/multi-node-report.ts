import { setTimeout as sleep } from "node:timers/promises";
import { type ParkwayClient, ParkwayClientError } from "../../src/client/index.js";
import type { FinalCounts } from "./multi-node-checks.js";
import type { NodeCluster } from "./node-cluster.js";

/** How hard to push. */
export interface MultiNodeFaultOptions {
  /** Parkway nodes on the one database. */
  nodes: number;
  /** SIGKILLs of a random node to deliver (at least). */
  kills: number;
  /** Crashes and restarts of PostgreSQL (at least). */
  postgresRestarts: number;
  /** Park and answer operations to complete (at least). */
  minOps: number;
  /** Sessions driven at the same time. */
  sessions: number;
  /** Operations between two kills: a random number in this range. */
  opsPerKill: [number, number];
  /** Operations between two PostgreSQL crashes: a random number in this range. */
  opsPerPostgresRestart: [number, number];
  /** How long PostgreSQL stays down (ms): a random number in this range. */
  postgresDownMs: [number, number];
  /** Stop even if the targets are not met. */
  timeLimitMs: number;
}

/** What happened, and every promise that did not hold. */
export interface MultiNodeFaultReport extends FinalCounts {
  kills: number;
  postgresRestarts: number;
  parks: number;
  answers: number;
  /** Messages whose reply a restart ended before it parked. */
  interruptedMessages: number;
  /** Answers whose reply a restart ended while its tool ran. */
  interruptedAnswers: number;
  /** Calls that failed and were sent again, by status code (and reason, from the message). */
  retried: Record<string, number>;
  /** Events the sessions' Chat streams received. */
  streamed: number;
  /** Of those, events not stored: shown ahead of a write that a node's death lost. */
  lost: number;
  /** Node lives started. */
  lives: number;
  /** Node starts that failed (the database was down). */
  failedStarts: number;
  /** Node exits the harness did not cause (75: the store failed), by exit code. */
  exits: Record<string, number>;
  /** The last lines logged before the first such exit of each code. */
  exitLogs: Record<string, string[]>;
  /** The first line of each error the nodes logged, by message. */
  nodeErrors: Record<string, string>;
  /** Attaches refused other than for a transient failure, by status code. */
  attachRefused: Record<string, number>;
  /** The first message of each code of attach refusal. */
  attachMessages: Record<string, string>;
  durationMs: number;
  violations: string[];
}

/** A report with nothing counted yet. */
export function emptyReport(): MultiNodeFaultReport {
  return {
    kills: 0,
    postgresRestarts: 0,
    parks: 0,
    answers: 0,
    interruptedMessages: 0,
    interruptedAnswers: 0,
    retried: {},
    streamed: 0,
    lost: 0,
    crossed: 0,
    lives: 0,
    failedStarts: 0,
    exits: {},
    exitLogs: {},
    nodeErrors: {},
    attachRefused: {},
    attachMessages: {},
    effects: 0,
    toolRuns: 0,
    modelCalls: 0,
    handedOver: 0,
    orphanRuns: 0,
    durationMs: 0,
    violations: [],
  };
}

/** A random number in the range, both ends included. */
export const pick = ([lo, hi]: [number, number]): number =>
  lo + Math.floor(Math.random() * (hi - lo + 1));

/** A failed call's status code, and why when its message says (another node's lease, storage). */
export function kindOf(err: unknown): string {
  if (!(err instanceof ParkwayClientError)) return "other";
  if (/served by another node/.test(err.message)) return `${err.codeName} leased`;
  if (/storage failed/.test(err.message)) return `${err.codeName} storage failed`;
  return err.codeName;
}

/** What a client retries as a matter of course: the node went away, or cannot serve it now. */
const RETRIED = ["UNAVAILABLE", "CANCELLED", "DEADLINE_EXCEEDED"];
/** Whether a client retries the error as a matter of course (see `RETRIED`). */
export const isRetried = (err: unknown): boolean =>
  !(err instanceof ParkwayClientError) || RETRIED.includes(err.codeName);

/** Codes a node should not answer for a fault of its own or of the database: retried, and noted. */
const SUSPECT = ["INTERNAL", "UNKNOWN", "ABORTED"];

/**
 * `f` on a random node, sent again (the same call: the same request id) to a random node while it
 * fails with a transient error; an INTERNAL, UNKNOWN or ABORTED answer is a broken promise (a node
 * whose database went away stops or refuses with UNAVAILABLE) and is retried too. Once stopping,
 * it gives up after 15 s and resolves with undefined. Other errors are thrown.
 */
export async function callAnyNode<T>(
  cluster: NodeCluster,
  report: MultiNodeFaultReport,
  stopping: () => boolean,
  violation: (text: string) => void,
  f: (c: ParkwayClient) => Promise<T>,
): Promise<T | undefined> {
  let giveUpAt = Infinity;
  for (;;) {
    try {
      return await f(cluster.anyClient());
    } catch (err) {
      const code = err instanceof ParkwayClientError ? err.codeName : "UNAVAILABLE";
      if (!RETRIED.includes(code) && !SUSPECT.includes(code)) throw err;
      const kind = kindOf(err);
      report.retried[kind] = (report.retried[kind] ?? 0) + 1;
      if (SUSPECT.includes(code))
        violation(`a call failed with ${code}: ${(err as Error).message}`);
      if (stopping()) giveUpAt = Math.min(giveUpAt, Date.now() + 15_000);
      if (Date.now() > giveUpAt) return undefined;
      await sleep(20 + Math.random() * 100);
    }
  }
}
