import { fileURLToPath } from "node:url";

export { type ChatMessage, type ChatRequest } from "./chat-request.js";
export {
  type Script,
  ScriptError,
  type ScriptToolCall,
  type Turn,
  type TurnFailure,
  type TurnMatch,
  type TurnUsage,
  loadScript,
  parseScript,
  scriptSchema,
} from "./script.js";
export {
  type ScriptedModelOptions,
  type ScriptedModelServer,
  startScriptedModel,
} from "./scripted-model-server.js";

/** The path of the built-in demo script: one reusable text turn that introduces Parkway. */
export const DEMO_SCRIPT_PATH = fileURLToPath(new URL("./demo-script.json", import.meta.url));
