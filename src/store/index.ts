export type { RangeOptions, Store, StoreBatch, WriteOptions } from "./store.js";
export {
  decodeRecord,
  defineRecord,
  encodeRecord,
  RecordError,
  type RecordType,
} from "./record.js";
export {
  createLevelStore,
  LEVEL_TUNING,
  LevelStore,
  type LevelTuning,
  StoreLockedError,
  StoreOpenError,
} from "./level-store.js";
export { ConflictError, StorageFailure, StoreClosedError } from "./storage-failure.js";
export { createMemoryStore, MemoryStore } from "./memory-store.js";
export { DataDirectoryError } from "./data-directory.js";
export { StoreDamagedError } from "./store-damage.js";
export { repairStore, type RepairReport } from "./level-repair.js";
