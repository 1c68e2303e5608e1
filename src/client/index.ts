export {
  type CallSettings,
  type ClientOptions,
  createParkwayClient,
  ParkwayClient,
} from "./client.js";
export { fromRpcStatus, fromServiceError, ParkwayClientError } from "./errors.js";
export { ParkwaySession, type SessionInput, type SessionOptions, settlesReply } from "./session.js";
export {
  type Answer,
  askUserResult,
  type ConfirmOptions,
  confirmation,
  denial,
  type ExternalResult,
  executionResult,
  type Scope,
} from "./inputs.js";
