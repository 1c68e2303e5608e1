import type { AgentDefinition } from "../agent/agent.js";
import type { EventBody } from "../agent/events.js";
import type { Msg, ToolCallBlock } from "../agent/types.js";
import { DEFAULT_MAX_REPLY_BYTES } from "../common/message-size.js";
import type { StoreBatch } from "../store/store.js";
import type { Tool } from "../tools/tool.js";
import type { ActiveReply } from "./active-reply.js";
import { confirmAudit, expiryAudit, externalAudit } from "./audit-entries.js";
import { writeAudit } from "./audit-records.js";
import { denyExpired } from "./new-reply.js";
import {
  type AnswerContext,
  applyConfirmations,
  applyExternalResults,
  type ConfirmAnswer,
  type ExternalAnswer,
} from "./reply-inputs.js";
import type { RuleBook } from "./rule-book.js";
import type { SessionHead } from "./session-head.js";
import type { SessionPermissions } from "./session-permissions.js";
import { messageCopy } from "../agent/copies.js";

/**
 * An answer applied to a copy of the parked reply's message: the message it makes, the events it
 * produced, and the records to store with them. Nothing of the session changed yet, so a refused
 * answer leaves nothing behind.
 */
export interface PreparedAnswer {
  message: Msg;
  events: EventBody[];
  records: (batch: StoreBatch) => void;
  /** Called once the answer is stored. */
  committed?: () => void;
}

/** Prepares an answer for the parked reply `active`; throws when the answer is refused. */
export type PrepareAnswer = (active: ActiveReply) => Promise<PreparedAnswer> | PreparedAnswer;

/** The session an answer is prepared in. */
export interface AnsweredSession {
  head: SessionHead;
  agent: AgentDefinition;
  tools: ReadonlyMap<string, Tool>;
  permissions: SessionPermissions;
  rules: RuleBook;
}

function context(s: AnsweredSession, principal: string, events: EventBody[]): AnswerContext {
  const state = s.permissions.current();
  return {
    sessionId: s.head.id,
    agentId: s.agent.id,
    tools: s.tools,
    rules: state.rules,
    workingDirectories: state.workingDirectories,
    homeDir: state.homeDir,
    principal,
    maxReplyBytes: s.agent.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES,
    emit: (body) => events.push(body),
  };
}

/** Confirmations of asking calls, with the rules they accept (refused whole when one is bad). */
export function confirmations(
  s: AnsweredSession,
  answers: ConfirmAnswer[],
  principal: string,
): PrepareAnswer {
  return async (active) => {
    await s.permissions.refresh();
    const message = messageCopy(active.data.message);
    const events: EventBody[] = [];
    const accepted = applyConfirmations(message, answers, context(s, principal, events));
    const audit = confirmAudit(s.head.id, active.data.message, answers, principal);
    const { fresh } = await s.rules.prepare(accepted);
    return {
      message,
      events,
      records: (b) => {
        s.rules.write(b, fresh);
        writeAudit(b, s.head.tenant, audit);
      },
      committed: () => s.rules.committed(fresh),
    };
  };
}

/** Results of calls the client executes (refused whole when one is bad). */
export function externalResults(
  s: AnsweredSession,
  answers: ExternalAnswer[],
  principal: string,
): PrepareAnswer {
  return (active) => {
    const message = messageCopy(active.data.message);
    const events: EventBody[] = [];
    applyExternalResults(message, answers, context(s, principal, events));
    const audit = externalAudit(s.head.id, message, answers, principal);
    return { message, events, records: (b) => writeAudit(b, s.head.tenant, audit) };
  };
}

/** The `due` calls finished DENIED because nobody answered them within `seconds`. */
export function expiredDenied(
  s: AnsweredSession,
  due: readonly ToolCallBlock[],
  seconds: number,
): PrepareAnswer {
  return (active) => {
    const audit = expiryAudit(
      s.head.id,
      active.data.replyId,
      due,
      `no answer within ${seconds}s; denied`,
    );
    const message = messageCopy(active.data.message);
    const events: EventBody[] = [];
    denyExpired(message, due, seconds, (body) => events.push(body));
    return { message, events, records: (b) => writeAudit(b, s.head.tenant, audit) };
  };
}
