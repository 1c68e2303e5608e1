import { invalidArgument, ParkwayError, quotedId } from "../common/errors.js";
import { type Metrics, noMetrics } from "../common/telemetry.js";
import { limitReached, RateLimiter } from "../common/limits.js";
import type { ExternalToolSpec } from "../session/records.js";
import type { SessionManager, SessionView } from "../session/session-manager.js";
import { encodeSessionPageToken } from "../session/session-list.js";
import { type Session, SessionStatus } from "../generated/parkway/v1/agent_service.js";
import { PermissionMode } from "../generated/parkway/v1/permission.js";
import type { Attach, ClientEvent } from "../generated/parkway/v1/events.js";
import type { AgentServiceHandlers } from "./agent-service.js";
import { schemaError } from "../tools/external-tool.js";
import { toolCallToPb, msgToPb } from "./mappers/content.js";
import { permissionMode, sessionStatus } from "./mappers/enums.js";
import { agentToPb } from "./mappers/agents.js";
import { applySent, applyUnary } from "./apply-sent.js";
import { AttachedEvents, attachCall, endsReply, itemToPb, lazyStream } from "./attached-events.js";
import { listMessagesHandler } from "./list-messages.js";
import { checkedRequest } from "./request-decoding.js";
import { watchSendHandlers } from "./watch-send.js";
import { checkSessionSpec, sessionsThatFit } from "./response-size.js";

function sessionToPb(view: SessionView): Session {
  return {
    id: view.id,
    agentId: view.agentId,
    status: sessionStatus.toPb(view.status),
    pendingToolCalls: view.pendingToolCalls.map(toolCallToPb),
    lastSeq: view.lastSeq,
    replyId: view.replyId ?? "",
    permissionMode: permissionMode.toPb(view.mode),
    workingDirectories: view.workingDirectories,
    externalTools: view.externalTools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      metadataSchema: t.metadataSchema ?? "",
    })),
    createdAt: new Date(view.createdAt),
    updatedAt: new Date(view.updatedAt),
    metadata: view.metadata,
    usage: view.usage,
  };
}

function parseExternalTools(
  tools: { name: string; description: string; inputSchema: string; metadataSchema: string }[],
): ExternalToolSpec[] {
  const seen = new Set<string>();
  return tools.map((t, i) => {
    const field = `external_tools[${i}]`;
    if (!/^[A-Za-z][A-Za-z0-9_-]{0,63}$/.test(t.name)) {
      throw invalidArgument([
        {
          field: `${field}.name`,
          description: "must be 1-64 letters, digits, _ or -, starting with a letter",
        },
      ]);
    }
    if (seen.has(t.name)) {
      throw invalidArgument([{ field: `${field}.name`, description: `duplicate tool ${t.name}` }]);
    }
    seen.add(t.name);
    for (const key of ["inputSchema", "metadataSchema"] as const) {
      if (key === "metadataSchema" && t.metadataSchema === "") continue;
      const name = `${field}.${key === "inputSchema" ? "input_schema" : "metadata_schema"}`;
      let parsed: unknown;
      try {
        parsed = JSON.parse(t[key] || "{}");
      } catch {
        parsed = undefined;
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        throw invalidArgument([
          { field: name, description: "must be a JSON Schema object encoded as a JSON string" },
        ]);
      }
      const problem = schemaError(parsed as Record<string, unknown>);
      if (problem) {
        throw invalidArgument([
          { field: name, description: `is not a usable JSON Schema: ${problem}` },
        ]);
      }
    }
    return {
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema || '{"type":"object"}',
      ...(t.metadataSchema ? { metadataSchema: t.metadataSchema } : {}),
    };
  });
}

/**
 * The session a Chat stream's first message attaches to: `attach.session_id`, which is required;
 * the event's own `session_id`, when set, must name the same session. A value the request was
 * refused for as it was decoded (see `withSafeDecoding`) is refused first.
 */
function attachedSession(hello: ClientEvent, attach: Attach): string {
  checkedRequest(hello);
  if (!attach.sessionId) {
    throw invalidArgument([{ field: "attach.session_id", description: "is required" }]);
  }
  if (hello.sessionId && hello.sessionId !== attach.sessionId) {
    throw invalidArgument([
      {
        field: "session_id",
        description: `is ${JSON.stringify(quotedId(hello.sessionId))}, not the session attach.session_id names (${JSON.stringify(quotedId(attach.sessionId))}); leave it empty or name the same session`,
      },
    ]);
  }
  return attach.sessionId;
}

/** What the agent service reports and how fast a stream may send. */
export interface AgentServiceOptions {
  /** Inputs one stream may send per second. */
  inputsPerSecond?: number;
  /** Where input acknowledgements are counted. */
  metrics?: Metrics;
  /** Counts the Chat and Watch streams open (`open`), for the streams gauge. */
  streams?: { open: number };
}

/** AgentService over the session manager. */
export function createAgentService(
  manager: SessionManager,
  options: AgentServiceOptions = {},
): AgentServiceHandlers {
  const metrics = options.metrics ?? noMetrics;
  const streams = options.streams ?? { open: 0 };
  return {
    chat(requests, ctx) {
      return lazyStream(async () => {
        const iterator = requests[Symbol.asyncIterator]();
        const first = await iterator.next();
        if (first.done) return undefined;
        const hello: ClientEvent = first.value;
        if (hello.event?.$case !== "attach") {
          throw new ParkwayError(
            "failed_precondition",
            "the first message of a Chat stream must be attach",
            {
              preconditionViolations: [
                { type: "STREAM", subject: "Chat", description: "attach first, then send inputs" },
              ],
            },
          );
        }
        const sessionId = attachedSession(hello, hello.event.value);
        const attached = await attachCall(
          manager,
          ctx,
          streams,
          sessionId,
          hello.event.value.afterSeq,
          "attach.after_seq",
        );
        const { subscriber } = attached;

        const rate = options.inputsPerSecond;
        const limiter = rate === undefined ? undefined : new RateLimiter(rate);
        // After the client half-closes, the stream ends (OK) once the session runs no reply.
        let halfClosed = false;
        const endIfQuiet = () => {
          if (!attached.running) subscriber.close();
        };
        const applyNext = async (next: IteratorResult<ClientEvent>): Promise<void> => {
          if (next.done) {
            halfClosed = true;
            endIfQuiet();
            return;
          }
          const msg = next.value;
          const sent = { sessionId, requestId: msg.requestId, input: msg.event };
          try {
            const applied = await applySent(manager, metrics, ctx, sent, "event", () => {
              checkedRequest(msg);
              if (limiter && !limiter.take()) {
                throw limitReached("inputsPerSecond", rate!, "this stream sends inputs too fast");
              }
              if (msg.sessionId && msg.sessionId !== sessionId) {
                throw invalidArgument([
                  { field: "session_id", description: `this stream is attached to ${sessionId}` },
                ]);
              }
            });
            attached.ack(msg.requestId, undefined, applied.writtenSeq);
          } catch (err) {
            attached.ack(msg.requestId, err);
          }
          readNext();
        };
        const pumpFailed = (err: unknown) => {
          // A stream the session ended (with the error it reports to the client) stops reading too.
          if (!subscriber.closed) ctx.log.error({ err, session: sessionId }, "input pump failed");
        };
        const onInput = (next: IteratorResult<ClientEvent>) => applyNext(next).catch(pumpFailed);
        // The inputs, one at a time: between two, the stream holds only the pending read.
        const readNext = () => void iterator.next().then(onInput, pumpFailed);
        readNext();
        const attachAck = itemToPb(
          { kind: "ack", ack: { requestId: hello.requestId, lastSeq: attached.lastSeq } },
          sessionId,
        );
        return new AttachedEvents(attached, sessionId, streams, [attachAck], (items) => {
          if (halfClosed && items.some(endsReply)) endIfQuiet();
        });
      });
    },

    async reply(request, ctx) {
      const tenant = ctx.principal.tenant;
      const applied = await applyUnary(manager, metrics, ctx, request);
      // A retry gets the outcome the input had the first time, not the session's state now.
      const done = applied.settled ? await applied.settled : await applied.firstOutcome?.();
      if (!done) {
        const view = await manager.get(tenant, request.sessionId);
        return {
          message: undefined,
          pendingToolCalls: view.pendingToolCalls.map(toolCallToPb),
          status: sessionStatus.toPb(view.status),
        };
      }
      return {
        message: msgToPb(done.message),
        pendingToolCalls: done.pending.map(toolCallToPb),
        status: sessionStatus.toPb(done.status),
      };
    },

    ...watchSendHandlers(manager, metrics, streams),

    listMessages: listMessagesHandler(manager),

    async createSession(request, ctx) {
      checkSessionSpec(request);
      const mode = permissionMode.fromPb(request.permissionMode);
      if (request.permissionMode !== PermissionMode.PERMISSION_MODE_UNSPECIFIED && !mode) {
        throw invalidArgument([{ field: "permission_mode", description: "unknown mode" }]);
      }
      const view = await manager.create(ctx.principal.tenant, {
        agentId: request.agentId,
        externalTools: parseExternalTools(request.externalTools),
        ...(mode ? { mode } : {}),
        workingDirectories: request.workingDirectories,
        ...(request.metadata ? { metadata: request.metadata } : {}),
      });
      return { session: sessionToPb(view) };
    },

    async getSession(request, ctx) {
      return { session: sessionToPb(await manager.get(ctx.principal.tenant, request.sessionId)) };
    },

    async listSessions(request, ctx) {
      const status = sessionStatus.fromPb(request.status);
      if (request.status !== SessionStatus.SESSION_STATUS_UNSPECIFIED && !status) {
        throw invalidArgument([{ field: "status", description: "unknown status" }]);
      }
      if (request.pageSize > 1000) {
        throw invalidArgument([{ field: "page_size", description: "must be at most 1000" }]);
      }
      const page = await manager.list(ctx.principal.tenant, {
        ...(status ? { status } : {}),
        ...(request.agentId ? { agentId: request.agentId } : {}),
        pageSize: request.pageSize || 100,
        ...(request.pageToken ? { pageToken: request.pageToken } : {}),
      });
      const sessions = page.sessions.map(sessionToPb);
      // A page also ends where the next session would make it too large to receive.
      const fit = sessionsThatFit(sessions);
      return fit < sessions.length
        ? {
            sessions: sessions.slice(0, fit),
            nextPageToken: encodeSessionPageToken(sessions[fit - 1]!.id),
          }
        : { sessions, nextPageToken: page.nextPageToken ?? "" };
    },

    async deleteSession(request, ctx) {
      await manager.delete(ctx.principal.tenant, request.sessionId);
      return {};
    },

    listAgents() {
      return Promise.resolve({ agents: manager.listAgents().map(agentToPb) });
    },
  };
}
