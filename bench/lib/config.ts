import { tmpdir } from "node:os";
import path from "node:path";

/** Sizes and repetitions of one benchmark run. */
export interface BenchConfig {
  smoke: boolean;
  /** Measured round trips per latency row (after `warmup`). */
  iterations: number;
  warmup: number;
  /** Text deltas per streamed reply. */
  streamDeltas: number;
  /** Replies in a row of the one-session throughput row (the many-sessions row runs one each). */
  singleSessionReplies: number;
  /** Sessions of the many-sessions throughput row. */
  manySessions: number;
  /** Parked-reply data sets; the first is the reference of the "flat" rows. */
  parkedSizes: number[];
  /** Parked replies resumed per data set. */
  resumeSamples: number;
  /** Restarts per data set (Parkway and bare open alternate). */
  restarts: number;
  /** Process starts of each kind in the start-up rows. */
  startups: number;
  /** The parked-reply count of the restart row (a data set of `parkedSizes`, or built). */
  restartParked: number;
  idleStreams: number;
  /** Where generated data sets are cached between runs. */
  dataCache: string;
  /** Scratch directory for this run's data directories. */
  scratch: string;
  /** Write CPU profiles of the Parkway server here (none when unset). */
  profileDir?: string;
}

/** The full run (`npm run bench`). */
export function fullConfig(scratch: string): BenchConfig {
  return {
    smoke: false,
    iterations: 400,
    warmup: 50,
    streamDeltas: 2000,
    singleSessionReplies: 16,
    manySessions: 64,
    parkedSizes: [1_000, 100_000, 1_000_000],
    resumeSamples: 200,
    restarts: 30,
    startups: 10,
    restartParked: 100_000,
    idleStreams: 10_000,
    dataCache: path.join(tmpdir(), "parkway-bench-data"),
    scratch,
  };
}

/** The smoke run (`npm run bench:smoke`): every benchmark at tiny sizes, numbers not meaningful. */
export function smokeConfig(scratch: string): BenchConfig {
  return {
    smoke: true,
    iterations: 15,
    warmup: 3,
    streamDeltas: 100,
    singleSessionReplies: 2,
    manySessions: 4,
    parkedSizes: [20, 200],
    resumeSamples: 3,
    restarts: 2,
    startups: 2,
    restartParked: 200,
    idleStreams: 40,
    dataCache: path.join(scratch, "data-cache"),
    scratch,
  };
}
