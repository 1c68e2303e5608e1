export {
  type CallSettings,
  type ClientOptions,
  createParkwayClient,
  ParkwayClient,
} from "./client.js";
export { fromRpcStatus, fromServiceError, ParkwayClientError } from "./errors.js";
export { ParkwaySession, type SessionInput, settlesReply } from "./session.js";
