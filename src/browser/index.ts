export {
  createWebClient,
  hasCode,
  type SendInput,
  type WebClient,
  type WebClientOptions,
} from "./create-web-client.js";
export { watchSession, type WatchOptions } from "./watch-session.js";
export { newRequestId } from "./request-id.js";
export {
  allow,
  askUserInput,
  type AskUserAnswerInput,
  confirmInput,
  deny,
  type ExternalResult,
  externalResultInput,
} from "./inputs.js";
export { Code, ConnectError } from "@connectrpc/connect";
export * from "../generated-es/parkway/v1/agent_service_pb.js";
export * from "../generated-es/parkway/v1/ask_user_pb.js";
export * from "../generated-es/parkway/v1/audit_pb.js";
export * from "../generated-es/parkway/v1/content_pb.js";
export * from "../generated-es/parkway/v1/events_pb.js";
export * from "../generated-es/parkway/v1/permission_pb.js";
