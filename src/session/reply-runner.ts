import { type AgentDefinition, policyFor } from "../agent/agent.js";
import type { EventBody } from "../agent/events.js";
import { type ReplyEnv, type ReplyOutcome, runReply } from "../agent/reply-loop.js";
import { InterruptReason } from "../agent/tool-runner.js";
import type { DecisionInfo, Msg, ToolCallBlock } from "../agent/types.js";
import type { Logger } from "../common/logger.js";
import type { Store } from "../store/store.js";
import type { Tool } from "../tools/tool.js";
import type { ActiveReply } from "./active-reply.js";
import { decisionAudit } from "./audit-entries.js";
import { writeAudit } from "./audit-records.js";
import type { EventHub } from "./event-hub.js";
import { readHistory } from "./history.js";
import type { SessionHead } from "./session-head.js";
import { sessionLog } from "./session-log.js";
import type { SessionPermissions } from "./session-permissions.js";

/** Why a shutdown interrupted a reply, as its REPLY_END and interrupted calls say. */
export const SHUTDOWN = {
  error: { code: "server_shutdown", message: "the server shut down while the reply was running" },
  resultText: "The tool call was interrupted because the server shut down.",
};

/** What running a reply needs from its session. */
export interface RunningSession {
  head: SessionHead;
  hub: EventHub;
  store: Store;
  logger: Logger;
  agent: AgentDefinition;
  tools: ReadonlyMap<string, Tool>;
  permissions: SessionPermissions;
}

/** How the reply's events and the permission engine's decisions reach the session. */
export interface RunHooks {
  emit: (body: EventBody) => void;
  decided: (call: ToolCallBlock, decision: DecisionInfo) => void;
  /** Parks the running reply on a question one of its tools asked (see `ReplyEnv.ask`). */
  ask: NonNullable<ReplyEnv["ask"]>;
  /** True once the session stopped: a failure is then expected and not logged again. */
  stopped: () => boolean;
}

/**
 * The conversation a reply runs with. A reply just started takes it from memory, without waiting
 * for its start to be written, when the session holds every message before its user message;
 * otherwise what is being written is stored first, then read.
 */
async function historyOf(s: RunningSession, starting: ActiveReply["starting"]): Promise<Msg[]> {
  const known = s.head.history;
  if (starting && known.length >= starting.index) {
    return [...known.slice(0, starting.index), starting.user];
  }
  await s.hub.settled(); // the history is stored before it is read
  return readHistory(s.store, s.head.id, s.head.data.messageCount, known);
}

/**
 * Runs the reply from where it stands (started, or resumed after answers) until it finishes or
 * parks, and returns how it stopped; never throws. A failure of the reply is a finished outcome
 * with an internal error; a shutdown's interrupt carries `server_shutdown`.
 */
export async function runActiveReply(
  s: RunningSession,
  active: ActiveReply,
  hooks: RunHooks,
): Promise<ReplyOutcome> {
  try {
    // The events of the input that started the reply go out first.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const starting = active.starting;
    active.starting = undefined;
    await s.permissions.refresh();
    const history = await historyOf(s, starting);
    const progress = { iteration: active.data.iteration };
    const policy = policyFor(s.agent, s.head.tenant);
    let outcome = await runReply({
      agent: { ...s.agent, tools: s.tools },
      history,
      message: active.data.message,
      progress,
      signal: active.controller.signal,
      toolSignal: active.tools.signal,
      ...(starting ? { stored: starting.written } : {}),
      emit: hooks.emit,
      permissions: () => s.permissions.current(),
      ...(policy
        ? {
            policy: {
              config: policy,
              session: { id: s.head.id, tenant: s.head.tenant, agent: s.agent.id },
            },
          }
        : {}),
      decided: hooks.decided,
      ask: hooks.ask,
      modelTrace: () => active.observer?.modelTraceparent,
    });
    active.data.iteration = progress.iteration;
    if (outcome.kind === "finished" && outcome.error?.code.startsWith("model_")) {
      const model = s.agent.model;
      s.logger.warn(
        {
          ...sessionLog(s.head.id, active.data),
          agent: s.agent.id,
          model: model.name,
          ...(model.endpoint === undefined ? {} : { endpoint: model.endpoint }),
          code: outcome.error.code,
          error: outcome.error.message,
        },
        "model call failed",
      );
    }
    if (
      outcome.kind === "finished" &&
      outcome.finishedReason === "interrupted" &&
      active.controller.signal.reason instanceof InterruptReason
    ) {
      outcome = { ...outcome, error: SHUTDOWN.error };
      active.data.message.error = SHUTDOWN.error;
    }
    return outcome;
  } catch (err) {
    if (!hooks.stopped()) {
      s.logger.error({ err, ...sessionLog(s.head.id, active.data) }, "reply failed");
    }
    const error = { code: "internal", message: "the reply failed on the server" };
    active.data.message.finishedReason = "error";
    active.data.message.error = error;
    return { kind: "finished", finishedReason: "error", error };
  }
}

/**
 * The hooks a reply runs with: its events go to the hub, a REQUIRE_* asks for the checkpoint it
 * announces to be written with it (`announced`), and each decision of the permission engine is
 * audited in the write of the event that shows it.
 */
export function runHooks(
  s: RunningSession,
  active: ActiveReply,
  session: { announced: () => void; stopped: () => boolean; ask: RunHooks["ask"] },
): RunHooks {
  const { head, hub } = s;
  const replyId = active.data.replyId;
  return {
    emit: (body) => {
      hub.emit(replyId, body);
      if (body.type === "require_user_confirm" || body.type === "require_external_execution") {
        session.announced();
      }
    },
    decided: (call, decision) => {
      active.observer?.decided(decision);
      if (decision.policy && decision.policy.result !== decision.behavior) {
        const { result, reason, ignored } = decision.policy;
        s.logger[ignored ? "info" : "warn"](
          {
            ...sessionLog(head.id, active.data),
            toolCallId: call.id,
            tool: call.name,
            result,
            reason,
          },
          ignored
            ? "policy service answer ignored: it would loosen the engine's decision"
            : `policy service failed; the call ${decision.behavior === "ask" ? "asks" : "is denied"}`,
        );
      }
      const audit = decisionAudit(head.id, replyId, call, decision);
      hub.stage((b) => writeAudit(b, head.tenant, [audit]));
    },
    ask: session.ask,
    stopped: session.stopped,
  };
}

/** Stops the reply's model call, further tools and the tools that are running, with `reason`. */
export function abortReply(active: ActiveReply, reason: Error): void {
  active.controller.abort(reason);
  active.tools.abort(reason);
}

/**
 * Interrupts a running reply for a shutdown: its model call stops and no further tool starts at
 * once; tools that are running get `graceMs` to finish (one that does is recorded with its
 * result, one that does not is interrupted). The reply then ends as interrupted (REPLY_END error
 * `server_shutdown`), unless what it ran leaves it parked. Resolves once it has settled.
 */
export async function stopForShutdown(active: ActiveReply, graceMs: number): Promise<void> {
  const task = active.task;
  if (!task) return;
  const reason = new InterruptReason("the server is shutting down", SHUTDOWN.resultText);
  active.controller.abort(reason);
  const timer = setTimeout(() => active.tools.abort(reason), graceMs);
  await task.catch(() => undefined);
  clearTimeout(timer);
}
