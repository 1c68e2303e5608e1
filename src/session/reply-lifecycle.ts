import type { EventBody } from "../agent/events.js";
import type { Msg, ToolCallBlock } from "../agent/types.js";
import type { StoreBatch } from "../store/store.js";
import {
  type ActiveReply,
  activeReply,
  dueCalls,
  interruptUnfinished,
  toolsController,
  waitingCalls,
} from "./active-reply.js";
import { AskedQuestions } from "./asked-questions.js";
import { interruptAudit } from "./audit-entries.js";
import { writeAudit } from "./audit-records.js";
import { assertIdle, assertParked, assertReply } from "./input-checks.js";
import { newReply, replyStart, startRecords } from "./new-reply.js";
import { type AnsweredSession, expiredDenied, type PrepareAnswer } from "./prepared-answers.js";
import type { ReplyData } from "./records.js";
import { expiryEnding, type RecoveredReply, recoveryEnding } from "./reply-endings.js";
import type { NotedRequest, ReplySettled } from "./reply-outcomes.js";
import {
  abortReply,
  runActiveReply,
  runHooks,
  type RunningSession,
  stopForShutdown,
} from "./reply-runner.js";
import { ReplyWrites, type WritingSession } from "./reply-writes.js";
import type { RequestTicket } from "./request-ids.js";
import { replyStarts } from "./retention.js";
import { sessionLog } from "./session-log.js";

/** What a reply's lifecycle works with: its session's parts and what it tells the session. */
export interface LifecycleSession extends RunningSession, AnsweredSession, WritingSession {
  /** Told when a reply stopped running (finished, parked or failed). */
  idle: () => void;
  /** Stops the session after a failure to store the reply's end or park. */
  fail: (error: Error) => void;
}

/**
 * The life of a session's reply, the only writer of its states: starts it, runs it until it
 * finishes or parks, commits answers and resumes it, interrupts it, applies expiry, recovers it
 * after a crash, ends it with its one REPLY_END; each change is written with its events first.
 */
export class ReplyLifecycle {
  private readonly writes: ReplyWrites;
  private readonly questions: AskedQuestions;
  private disposed = false;
  private stopped = false;

  constructor(private readonly s: LifecycleSession) {
    this.writes = new ReplyWrites(s);
    this.questions = new AskedQuestions(s, this.writes);
  }

  private get active(): ActiveReply | undefined {
    return this.writes.current;
  }
  /** The reply's run while it runs (not parked): it resolves when the reply finishes or parks. */
  get task(): Promise<void> | undefined {
    return this.active?.task;
  }
  /** The running or parked reply as stored (its id, its trace). */
  get data(): ReplyData | undefined {
    return this.active?.data;
  }
  /** The running or parked reply's message as it is now (its waiting calls, its usage so far). */
  get message(): Msg | undefined {
    return this.active?.data.message;
  }

  /** The parked reply's calls (or its running tools' questions), announced again on attach. */
  parked(): { replyId: string; calls: ToolCallBlock[] } | undefined {
    const active = this.active;
    if (!active) return undefined;
    if (!active.task) return { replyId: active.data.replyId, calls: waitingCalls(active) };
    const asked = this.questions.waiting(active);
    return asked.length > 0 ? { replyId: active.data.replyId, calls: asked } : undefined;
  }

  /** Every event of the session's reply, for its metrics and spans. */
  observe(body: EventBody): void {
    this.active?.observer?.event(body, this.active.data.message);
  }

  /** Restores the reply read from the store. */
  restore(reply: ReplyData | undefined): void {
    if (reply) this.writes.current = activeReply(reply);
  }

  /** Aborts the running reply because the session stopped with `error`. */
  halt(error: Error): void {
    this.stopped = true;
    this.active?.controller.abort(error);
    this.questions.withdrawAll();
  }

  /** Starts a reply for a user message; refused while a reply is running or parked. */
  async start(
    text: string,
    ticket: RequestTicket | undefined,
    caller?: string,
  ): Promise<{ replyId: string; settled: Promise<ReplySettled> }> {
    const { head, hub, outcomes } = this.s;
    assertIdle(head.id, this.active, this.disposed);
    const { user, reply: data } = newReply(this.s.agent.id, text, hub.lastSeq);
    const replyId = data.replyId;
    const index = head.data.messageCount;
    head.update({
      messageCount: index + 1,
      ...replyStarts(head.data, this.s.keepFinishedReplies, hub.lastSeq + 1),
    });
    head.setStatus("running", replyId);
    const active = activeReply(data);
    this.writes.current = active;
    const settled = outcomes.whenSettled(replyId);
    const request = outcomes.note(ticket, replyId, index + 1);
    // The event and the state it starts are written in one batch; the event goes out at once.
    const records = startRecords(head.id, index, user, data, request);
    const extra = this.writes.starting(active, caller, records);
    const written = hub.emitWith(replyId, [replyStart(this.s.agent.id)], { extra });
    // The run calls the model while the start is written; the input is acknowledged once it is.
    active.starting = { index, user, written: written.catch(() => undefined) };
    this.awaitOutcome(active, request, settled);
    this.run(active);
    await written;
    head.remember(index, user);
    return { replyId, settled };
  }

  /**
   * Interrupts the running or parked reply, resolving once it has ended, with a promise of its
   * settlement; a no-op on an idle session.
   */
  async interrupt(
    replyId: string,
    principal: string,
    ticket: RequestTicket | undefined,
  ): Promise<{ settled?: Promise<ReplySettled> }> {
    const { head, outcomes } = this.s;
    const active = this.active;
    if (!active) return {};
    assertReply(active.data.replyId, replyId);
    const settled = outcomes.whenSettled(active.data.replyId);
    const request = outcomes.note(ticket, active.data.replyId, head.data.messageCount);
    const extra = (b: StoreBatch) => {
      request?.write(b);
      writeAudit(b, head.tenant, [interruptAudit(head.id, active.data.replyId, principal)]);
    };
    if (active.task) {
      const task = active.task;
      abortReply(active, new Error("interrupted by the user"));
      await this.s.hub.commit({ extra });
      this.awaitOutcome(active, request, settled);
      await task;
      // It had finished running and was parking when the interrupt came: it ends now.
      if (this.active === active && active.task === undefined) {
        const events = interruptUnfinished(active);
        await this.writes.end(active, { finishedReason: "interrupted", events });
      }
      return { settled };
    }
    const events = interruptUnfinished(active);
    await this.writes.end(active, { finishedReason: "interrupted", events, records: extra });
    this.awaitOutcome(active, request, settled);
    return { settled };
  }

  /**
   * Commits an answer `prepare` makes for the parked reply (refused whole), then resumes it; or,
   * while the running reply's tools asked questions, the answers to those, handed to the tools.
   * `caller` is the `traceparent` of the call that brought the answer.
   */
  async answer(
    replyId: string,
    what: string,
    prepare: PrepareAnswer,
    ticket: RequestTicket | undefined,
    caller?: string,
  ): Promise<{ settled: Promise<ReplySettled> }> {
    const { head, outcomes } = this.s;
    const asked = this.active?.task !== undefined && this.questions.asking;
    const active =
      asked && this.active
        ? this.questions.assertAsked(this.active, replyId)
        : assertParked(head.id, this.active, head.data.status, replyId, what);
    const prepared = await prepare(active);
    const toTools = asked ? this.questions.accept(active, prepared, what) : undefined;
    const settled = outcomes.whenSettled(active.data.replyId);
    const request = outcomes.note(ticket, active.data.replyId, head.data.messageCount);
    const extra = (b: StoreBatch) => {
      prepared.records(b);
      request?.write(b);
    };
    if (toTools) await toTools(extra);
    else await this.writes.commitAnswer(active, prepared.message, prepared.events, extra, caller);
    prepared.committed?.();
    this.awaitOutcome(active, request, settled);
    if (!toTools) this.resume(active, caller);
    return { settled };
  }

  /**
   * Applies the expiry policy to the parked calls due by `now` ("deny": DENIED with a timed-out
   * reason the model sees, and the reply resumes; "interrupt": the reply is interrupted). "busy"
   * while the reply runs on from an answer to another call: it may park again with them.
   */
  async expire(now: Date): Promise<"done" | "busy"> {
    const active = this.active;
    const due = active ? dueCalls(active, now) : [];
    if (!active || due.length === 0) return "done"; // the calls were answered first
    if (active.task) return "busy";
    const seconds = Math.round((this.s.agent.confirmTimeoutMs ?? 0) / 1000);
    this.writes.stageNotification(active, { event: "call.expired", expired: due });
    if (this.s.agent.expiryPolicy === "interrupt") {
      const { head } = this.s;
      await this.writes.end(active, expiryEnding(head.id, head.tenant, active, due, seconds));
    } else {
      const prepared = await expiredDenied(this.s, due, seconds)(active);
      await this.writes.commitAnswer(active, prepared.message, prepared.events, prepared.records);
      this.resume(active);
    }
    return "done";
  }

  /**
   * Ends a reply that was running when the server stopped (see `recoveryEnding`) with
   * REPLY_END(interrupted, "server_restarted"); returns it, with the calls it interrupted.
   */
  async recover(): Promise<RecoveredReply | undefined> {
    const active = this.active;
    if (!active || active.task || active.data.state !== "running") return undefined;
    const ending = await recoveryEnding(this.s.hub, active);
    await this.writes.end(active, ending);
    return { data: active.data, interrupted: ending.interrupted };
  }

  /** Interrupts a running reply for a shutdown (see `stopForShutdown`). */
  stop(graceMs: number): Promise<void> {
    return this.active ? stopForShutdown(this.active, graceMs) : Promise.resolve();
  }

  /** Refuses new replies and stops the running one at once, for the session's deletion. */
  async dispose(): Promise<void> {
    this.disposed = true;
    const task = this.active?.task;
    if (!task || !this.active) return;
    abortReply(this.active, new Error("session deleted"));
    await task.catch(() => undefined);
  }

  /** Once an input's request id is stored: until the reply settles, its outcome is the settlement. */
  private awaitOutcome(
    active: ActiveReply,
    request: NotedRequest | undefined,
    settled: Promise<ReplySettled>,
  ): void {
    // A reply that has already ended stored its final message, the outcome, with its end.
    if (!request || this.active !== active) return;
    (active.awaiting ??= []).push({ requestId: request.requestId, record: request.record });
    this.s.outcomes.awaitFirst(request, settled);
  }

  private resume(active: ActiveReply, caller?: string): void {
    active.controller = new AbortController();
    active.tools = toolsController();
    this.writes.observer(active)?.running(active.data, caller);
    this.run(active);
  }

  private run(active: ActiveReply): void {
    const hooks = runHooks(this.s, active, {
      announced: () => this.writes.stageCheckpoint(active),
      stopped: () => this.stopped,
      ask: (question, check, signal) => this.questions.ask(active, question, check, signal),
    });
    // The reply runs until its end or park is stored: until then no other node may take the
    // session, nor an input or a recovery end it a second time.
    let task: Promise<void> | undefined = undefined;
    task = (async () => {
      const outcome = await runActiveReply(this.s, active, hooks);
      try {
        await this.writes.settle(active, outcome);
      } catch (err) {
        // The write that ends or parks the reply failed: the session has stopped (its hub told
        // it), and those waiting for the reply got the error.
        if (!this.stopped) {
          const { head, logger } = this.s;
          logger.error({ err, ...sessionLog(head.id, active.data) }, "reply not stored");
          this.s.fail(err instanceof Error ? err : new Error(String(err)));
        }
      } finally {
        if (active.task === task) active.task = undefined;
        this.s.idle();
      }
    })();
    active.task = task;
  }
}
