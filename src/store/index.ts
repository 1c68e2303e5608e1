export type { RangeOptions, Store, StoreBatch, WriteOptions } from "./store.js";
export {
  decodeRecord,
  defineRecord,
  encodeRecord,
  RecordError,
  type RecordType,
} from "./record.js";
export { createLevelStore, LevelStore } from "./level-store.js";
export { StoreLockedError, StoreOpenError } from "./level-open.js";
export { LEVEL_TUNING, type LevelTuning } from "./level-tuning.js";
export { ConflictError, StorageFailure, StoreClosedError } from "./storage-failure.js";
export { createMemoryStore, MemoryStore } from "./memory-store.js";
export { DataDirectoryError } from "./data-directory.js";
export { StoreDamagedError } from "./store-damage.js";
export { repairStore, type RepairReport } from "./level-repair.js";
