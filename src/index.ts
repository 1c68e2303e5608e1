/**
 * Parkway as a library: start a server inside your own process, with your own tools, model and
 * store. The gRPC client for frontends is exported from "parkway/client".
 */
export { type Config, type ConfigInput, loadConfig, parseConfig } from "./config/index.js";
export { type RunningParkway, type StartOptions, startParkway } from "./runtime/start-parkway.js";
export { defineTool, type ToolDefinition } from "./tools/define-tool.js";
export type { Tool, ToolContext, ToolResult } from "./tools/tool.js";
export { builtinTools } from "./tools/builtin.js";
export {
  type Model,
  ModelError,
  type ModelMessage,
  type ModelRequest,
  type ModelStreamEvent,
  type ModelToolCall,
  type ModelToolSpec,
  type ModelUsage,
} from "./model/model.js";
export { createOpenAIModel, type OpenAIModelOptions } from "./model/openai-model.js";
export {
  DEMO_SCRIPT_PATH,
  type Script,
  type ScriptedModelServer,
  startScriptedModel,
} from "./model/scripted/index.js";
export type { RangeOptions, Store, StoreBatch } from "./store/store.js";
export { createLevelStore } from "./store/level-store.js";
export { createMemoryStore, MemoryStore } from "./store/memory-store.js";
export { StoreDamagedError } from "./store/store-damage.js";
export { ConflictError, StorageFailure, StoreClosedError } from "./store/storage-failure.js";
export { defineRecord, type RecordType } from "./store/record.js";
export { ParkwayError, type ErrorCode } from "./common/errors.js";
export type { Logger } from "./common/logger.js";
