import { isoNow } from "../common/iso-now.js";
import type { AgentDefinition } from "../agent/agent.js";
import type { EventBody } from "../agent/events.js";
import type { ReplyOutcome } from "../agent/reply-loop.js";
import type { Telemetry } from "../common/telemetry.js";
import { emptyUsage, type Msg, type ToolCallBlock } from "../agent/types.js";
import { addUsage } from "../agent/usage.js";
import type { StoreBatch } from "../store/store.js";
import { type ActiveReply, checkpoint, parkedStatus, waitingCalls } from "./active-reply.js";
import { epochNow } from "./deferred-spans.js";
import type { EventHub } from "./event-hub.js";
import { ParkedRecord, ReplyRecord, RunningRecord } from "./records.js";
import { endRecords, type Ending, parkedRequests } from "./reply-endings.js";
import type { ReplyOutcomes, ReplySettled } from "./reply-outcomes.js";
import { ReplyTelemetry } from "./reply-telemetry.js";
import { compaction } from "./retention.js";
import type { SessionHead } from "./session-head.js";
import { waitingNotice } from "./waiting-notice.js";
import type { NotificationFacts } from "./notifications/notification-body.js";
import type { Outbox } from "./notifications/outbox.js";

/** What the writes of a reply's states go through. */
export interface WritingSession {
  head: SessionHead;
  hub: EventHub;
  outcomes: ReplyOutcomes;
  /** Keep the events of this many finished replies per session; undefined keeps all. */
  keepFinishedReplies?: number;
  /** Told about every parked call's deadline once the park is stored. */
  expiry?: { note(at: string): void };
  /** What replies report about themselves. */
  telemetry: Telemetry;
  /** Where park notifications are written, when receivers are configured. */
  outbox?: Outbox | undefined;
  agent: AgentDefinition;
}

/**
 * The session's current reply and the writes that change its state: an answer committed (the
 * reply runs again), a park, an end with its one REPLY_END. Each is one write with the events
 * that show it, and those events are visible only once it is stored; a REQUIRE_* or REPLY_PARKED
 * carries a checkpoint of the reply (synced by the hub).
 */
export class ReplyWrites {
  /** The running or parked reply. */
  current: ActiveReply | undefined;
  /** A checkpoint is staged for the next write and not yet put into it. */
  private checkpointStaged = false;
  /** A write under way holds notifications. */
  private notified = false;

  constructor(private readonly s: WritingSession) {}

  /**
   * What starts `active` in its first batch: `records`, with its metrics and spans begun as the
   * batch is built, after REPLY_START has gone out (the span's ids are stored with the reply),
   * timed from now.
   */
  starting(
    active: ActiveReply,
    caller: string | undefined,
    records: (b: StoreBatch) => void,
  ): (b: StoreBatch) => void {
    const at = epochNow();
    return (b) => {
      this.observer(active)?.running(active.data, caller, at);
      records(b);
    };
  }

  /** The metrics and spans of `active`, made on first use; undefined when telemetry is off. */
  observer(active: ActiveReply): ReplyTelemetry | undefined {
    const { telemetry, head, agent } = this.s;
    if (active.observer || (!telemetry.metrics.enabled && !telemetry.tracing.enabled)) {
      return active.observer;
    }
    active.observer = new ReplyTelemetry(telemetry, {
      sessionId: head.id,
      agent: agent.id,
      tenant: head.tenant,
    });
    return active.observer;
  }

  /**
   * Puts the notifications of `facts` (the session's, the reply's and the last seq filled in) into
   * `b`; the sender is woken once the write that holds them is done (`sendNotified`).
   */
  notify(
    b: StoreBatch,
    active: ActiveReply,
    facts: Omit<NotificationFacts, "tenant" | "agent" | "sessionId" | "replyId" | "attachAfterSeq">,
  ): void {
    const { outbox, head, hub, agent } = this.s;
    if (!outbox) return;
    const staged = outbox.stage(b, {
      ...facts,
      tenant: head.tenant,
      agent: agent.id,
      sessionId: head.id,
      replyId: active.data.replyId,
      attachAfterSeq: hub.lastSeq,
    });
    if (staged) this.notified = true;
  }

  /** Puts the notifications of `facts` into the next write (see `notify`). */
  stageNotification(active: ActiveReply, facts: Parameters<ReplyWrites["notify"]>[2]): void {
    if (this.s.outbox) this.s.hub.stage((b) => this.notify(b, active, facts));
  }

  /** Wakes the outbox's sender after a write that held notifications. */
  private sendNotified(): void {
    if (!this.notified) return;
    this.notified = false;
    this.s.outbox?.written();
  }

  /** Puts a checkpoint of `active` into the next write (once, however often it is asked). */
  stageCheckpoint(active: ActiveReply): void {
    if (this.checkpointStaged) return;
    this.checkpointStaged = true;
    const hub = this.s.hub;
    hub.stage((b) => {
      this.checkpointStaged = false;
      if (this.current === active) checkpoint(b, this.s.head.id, active, hub.lastSeq);
    });
  }

  /**
   * Commits an answer: the reply's new state (a checkpoint), the events the answer produced, and
   * `extra`, in one synced atomic batch; only then are the events seen.
   */
  async commitAnswer(
    active: ActiveReply,
    message: Msg,
    events: EventBody[],
    extra: (b: StoreBatch) => void,
    caller?: string,
  ): Promise<void> {
    const replyId = active.data.replyId;
    const waited = waitingCalls(active);
    const since = active.data.waitingSince ?? {};
    active.data = { ...active.data, message, state: "running" };
    const still = new Set(waitingCalls(active).map((c) => c.id));
    const answered = waited.filter((c) => !still.has(c.id));
    active.data.waitingSince = Object.fromEntries(
      Object.entries(since).filter(([id]) => still.has(id)),
    );
    this.s.head.setStatus("running", replyId);
    this.stageCheckpoint(active);
    await this.s.hub.emitWith(replyId, events, {
      sync: true,
      extra: (b) => {
        // Applied only to the reply still stored as the session's: never to one ended or replaced
        // by a write this memory did not see.
        b.checkField(ReplyRecord, this.s.head.id, "replyId", replyId, "the parked reply")
          .put(RunningRecord, this.s.head.id, { replyId, since: isoNow() })
          .del(ParkedRecord, this.s.head.id);
        extra(b);
      },
    });
    this.sendNotified();
    this.observer(active)?.answered(active.data, answered, since, caller);
  }

  /**
   * Parks a reply that goes on running, on questions its tools asked (`AskedQuestions`): the
   * session awaits an external result and REPLY_PARKED announces the questions, written synced
   * with a checkpoint that still says running; those waiting for the reply get the notice.
   */
  async parkRunning(active: ActiveReply, questions: ToolCallBlock[]): Promise<void> {
    const { head, hub } = this.s;
    const replyId = active.data.replyId;
    const awaiting = active.awaiting;
    active.awaiting = undefined;
    head.setStatus("awaiting_external_result", replyId);
    const notice = waitingNotice(active.data.message, questions);
    active.data.parkedAt ??= isoNow();
    const status = head.data.status;
    if (awaiting && awaiting.length > 0) {
      hub.stage(parkedRequests(head.id, awaiting, { notice, status }));
    }
    this.stageCheckpoint(active);
    await hub.emitWith(replyId, [{ type: "reply_parked", message: notice }], {
      sync: true,
      extra: (b) => this.notify(b, active, { event: "reply.parked", pending: questions }),
    });
    this.sendNotified();
    this.s.outcomes.settled(replyId, { message: notice, status, pending: questions }, awaiting);
  }

  /** Ends a reply that is not running, as `ending` says. */
  end(active: ActiveReply, ending: Ending): Promise<void> {
    const { finishedReason, error } = ending;
    const outcome: ReplyOutcome = { kind: "finished", finishedReason, ...(error ? { error } : {}) };
    return this.settle(active, outcome, ending.events, ending.records);
  }

  /**
   * Ends or parks a reply. Ending writes `before` (events that end its calls), REPLY_END, the message
   * into the history, the removal of the reply and `extra` in one batch; parking announces
   * REPLY_PARKED with a synced checkpoint and, as the first outcome of the request ids applied since
   * the reply last settled, its waiting notice. Those waiting for the settlement get the final
   * message or the waiting notice once it is stored.
   */
  async settle(
    active: ActiveReply,
    outcome: ReplyOutcome,
    before: EventBody[] = [],
    extra?: (b: StoreBatch) => void,
  ): Promise<void> {
    const { head, hub } = this.s;
    const replyId = active.data.replyId;
    const message = active.data.message;
    const awaiting = active.awaiting;
    active.awaiting = undefined;
    const observer = this.observer(active);
    let settled: ReplySettled;
    if (outcome.kind === "finished") {
      const wasParked = active.data.state === "parked";
      const keep = this.s.keepFinishedReplies;
      const compact = await compaction(head.data, keep, hub.lastSeq, (a, b) =>
        hub.log.chunkKeys(a, b),
      );
      const index = head.data.messageCount;
      this.current = undefined;
      // No longer the session's reply: the events that end its calls reach its metrics here.
      for (const body of before) observer?.event(body, message);
      // The reply's usage moves into the session's total in the write that ends it, so the total
      // counts each reply once whatever crash comes between.
      const usage = message.usage ?? emptyUsage();
      const total = addUsage(head.data.usage, usage);
      head.update({ messageCount: index + 1, usage: total, ...compact?.data });
      head.setStatus("idle");
      settled = { message, status: "idle", pending: [] };
      const end: EventBody = {
        type: "reply_end",
        finishedReason: outcome.finishedReason,
        ...(outcome.error ? { error: outcome.error } : {}),
        usage,
      };
      const records = endRecords(head.id, index, message, compact?.keys ?? []);
      await hub.emitWith(replyId, [...before, end], {
        extra: (b) => {
          records(b);
          if (wasParked) b.del(ParkedRecord, head.id);
          if (wasParked || active.data.parkedAt !== undefined) {
            this.notify(b, active, {
              event: "reply.ended",
              finishedReason: outcome.finishedReason,
            });
          }
          extra?.(b);
        },
      });
      head.remember(index, message);
      this.sendNotified();
      observer?.ended(outcome.finishedReason, outcome.error);
    } else {
      const pending = waitingCalls(active);
      active.data.state = "parked";
      const now = isoNow();
      const since = (active.data.waitingSince ??= {});
      active.data.parkedAt ??= now;
      for (const call of pending) since[call.id] ??= now;
      head.setStatus(parkedStatus(pending), replyId);
      const notice = waitingNotice(message, pending);
      const status = head.data.status;
      const calls = notice.content.filter((b) => b.type === "tool_call");
      settled = { message: notice, status, pending: calls };
      if (awaiting && awaiting.length > 0) {
        hub.stage(parkedRequests(head.id, awaiting, { notice, status }));
      }
      // Written (synced, with the checkpoint) before the caller hears that the reply is parked.
      this.stageCheckpoint(active);
      const agentId = this.s.agent.id;
      await hub.emitWith(replyId, [{ type: "reply_parked", message: notice }], {
        extra: (b) => {
          b.put(ParkedRecord, head.id, { agentId, replyId });
          this.notify(b, active, { event: "reply.parked", pending: calls });
        },
      });
      this.sendNotified();
      observer?.parked();
      for (const call of pending) if (call.expiresAt) this.s.expiry?.note(call.expiresAt);
    }
    this.s.outcomes.settled(replyId, settled, awaiting);
  }
}
