export {
  type CallSettings,
  type ClientOptions,
  createParkwayClient,
  ParkwayClient,
  type SendInput,
} from "./client.js";
export { type WatchOptions } from "./watch.js";
export { type TlsOptions } from "./channel-credentials.js";
export { DEFAULT_CLIENT_KEEPALIVE, type KeepaliveOptions } from "./keepalive.js";
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
export {
  type Agent,
  type ListMessagesResponse,
  type SendResponse,
  type Session,
  SessionStatus,
} from "../generated/parkway/v1/agent_service.js";
export {
  FinishedReason,
  type Msg,
  type ToolCallBlock,
  ToolCallState,
  type ToolResultBlock,
  ToolResultState,
} from "../generated/parkway/v1/content.js";
export {
  AuditKind,
  type AuditRecord,
  type ListAuditRecordsResponse,
  type ListDeadLettersResponse,
  type DeadLetter,
} from "../generated/parkway/v1/audit.js";
export type { AskUserInput, AskUserMetadata } from "../generated/parkway/v1/ask_user.js";
export type { ClientEvent, ServerEvent } from "../generated/parkway/v1/events.js";
export {
  type PermissionDecision,
  PermissionBehavior,
  PermissionMode,
  type PermissionRule,
  type PolicyAnswer,
  PolicyResult,
  RuleScope,
  RuleSource,
} from "../generated/parkway/v1/permission.js";
