import { unimplemented } from "../common/errors.js";
import type {
  CreateSessionRequest,
  CreateSessionResponse,
  DeleteSessionRequest,
  DeleteSessionResponse,
  GetSessionRequest,
  GetSessionResponse,
  ListAgentsRequest,
  ListAgentsResponse,
  ListMessagesRequest,
  ListMessagesResponse,
  ListSessionsRequest,
  ListSessionsResponse,
  ReplyRequest,
  ReplyResponse,
  SendRequest,
  SendResponse,
  WatchRequest,
} from "../generated/parkway/v1/agent_service.js";
import type { ClientEvent, ServerEvent } from "../generated/parkway/v1/events.js";
import type { BidiHandler, ServerStreamHandler, UnaryHandler } from "./adapters.js";

/** The handlers of parkway.v1.AgentService, as plain async functions and generators. */
export interface AgentServiceHandlers {
  chat: BidiHandler<ClientEvent, ServerEvent>;
  watch: ServerStreamHandler<WatchRequest, ServerEvent>;
  send: UnaryHandler<SendRequest, SendResponse>;
  listMessages: UnaryHandler<ListMessagesRequest, ListMessagesResponse>;
  reply: UnaryHandler<ReplyRequest, ReplyResponse>;
  createSession: UnaryHandler<CreateSessionRequest, CreateSessionResponse>;
  getSession: UnaryHandler<GetSessionRequest, GetSessionResponse>;
  listSessions: UnaryHandler<ListSessionsRequest, ListSessionsResponse>;
  deleteSession: UnaryHandler<DeleteSessionRequest, DeleteSessionResponse>;
  listAgents: UnaryHandler<ListAgentsRequest, ListAgentsResponse>;
}

/** AgentService handlers for features that are not built: each answers UNIMPLEMENTED naming it. */
export function unimplementedAgentService(): AgentServiceHandlers {
  const missing = (feature: string) => () => Promise.reject(unimplemented(feature));
  return {
    chat: () => ({
      [Symbol.asyncIterator]: () => ({
        next: () => Promise.reject(unimplemented("AgentService.Chat (streamed conversations)")),
      }),
    }),
    watch: () => ({
      [Symbol.asyncIterator]: () => ({
        next: () => Promise.reject(unimplemented("AgentService.Watch (streamed conversations)")),
      }),
    }),
    send: missing("AgentService.Send (inputs)"),
    listMessages: missing("AgentService.ListMessages (messages)"),
    reply: missing("AgentService.Reply (replies)"),
    createSession: missing("AgentService.CreateSession (sessions)"),
    getSession: missing("AgentService.GetSession (sessions)"),
    listSessions: missing("AgentService.ListSessions (sessions)"),
    deleteSession: missing("AgentService.DeleteSession (sessions)"),
    listAgents: missing("AgentService.ListAgents (agents)"),
  };
}
