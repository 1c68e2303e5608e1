/**
 * LevelDB's open options that bound the memory it holds (classic-level's names; see `LEVEL_TUNING`).
 */
export interface LevelTuning {
  /** Files LevelDB keeps open, its table cache being 10 fewer tables (LevelDB raises it to 74). */
  maxOpenFiles?: number;
  /** Bytes of a table file before LevelDB starts the next one. */
  maxFileSize?: number;
  /** Bytes of the memtable (and of its log) before it is written out as a table. */
  writeBufferSize?: number;
  /** Bytes of data in a table's block (before compression); one index entry per block. */
  blockSize?: number;
  /** Bytes of LevelDB's cache of uncompressed blocks. */
  cacheSize?: number;
}

/**
 * The tuning a store opens with unless told otherwise, chosen so that the memory LevelDB holds stops
 * growing with the store:
 * - LevelDB keeps the tables it has read in its table cache, up to `maxOpenFiles` − 10 of them (990
 *   by default). Each one holds its index block in memory and stays memory-mapped, so every page
 *   read from it stays resident in the process; with the default both grow with the store, sessions
 *   parked long ago included, up to ≈2 GB of tables. 74, the least LevelDB accepts, bounds them to
 *   64 tables however many sessions the store keeps; a read from a table not in the cache opens it
 *   first (≈0.1 ms).
 * - 16 KB blocks (4 KB by default): one index entry per block, so a 2 MB table's index block is
 *   ≈50 KB instead of ≈110 KB, and the tables compress better (a store of 1M parked replies takes
 *   210 MB instead of 318 MB). A point read decompresses one 16 KB block.
 * - A 2 MB block cache (8 MB by default): a store larger than the cache fills it, the largest part
 *   of what a 100k-reply store held more than a 1k one; a block not in it is decompressed again
 *   from the mapped table. Tables written with other settings keep their own blocks.
 */
export const LEVEL_TUNING: Readonly<LevelTuning> = {
  maxOpenFiles: 74,
  blockSize: 16384,
  cacheSize: 2 * 1024 * 1024,
};
