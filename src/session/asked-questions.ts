import type { ToolCallBlock, ToolResultBlock } from "../agent/types.js";
import { failedPrecondition, type FieldViolation, invalidArgument } from "../common/errors.js";
import type { StoreBatch } from "../store/store.js";
import type { AskUserAnswer, ToolQuestion } from "../tools/tool-question.js";
import { type ActiveReply, waitingCalls } from "./active-reply.js";
import { executionResultField } from "./answer-fields.js";
import { assertReply } from "./input-checks.js";
import type { PreparedAnswer } from "./prepared-answers.js";
import type { ReplyWrites, WritingSession } from "./reply-writes.js";

interface Waiter {
  resolve: (result: ToolResultBlock | undefined) => void;
  check: ToolQuestion["check"];
  /** An answer to it is being stored: withdrawing it is too late. */
  answering: boolean;
  withdraw: () => void;
}

/** An answer's commit, once it passed every check: writes it with `extra`, then hands it over. */
export type QuestionCommit = (extra: (b: StoreBatch) => void) => Promise<void>;

/** The waiters of every session that has not asked yet: never written to. */
const NO_WAITERS: Map<string, Waiter> = new Map();

/**
 * The questions running tools asked in the session's reply (AskUser calls with `askedBy`, an MCP
 * server's forms), each awaited by its tool. Asking parks the running reply on the question
 * (REPLY_PARKED, the session awaits an external result, a synced checkpoint that still says
 * running, so a restart interrupts the reply as any running one); an answer is stored with its
 * events and then handed to the tool, and the reply goes on where it was. A question whose tool
 * stops waiting (its signal aborts: an interrupt, a shutdown, the MCP server gave up) is withdrawn.
 */
export class AskedQuestions {
  /** The questions awaiting answers; the shared empty map until a first question (see `ask`). */
  private waiters: Map<string, Waiter> = NO_WAITERS;

  constructor(
    private readonly s: WritingSession,
    private readonly writes: ReplyWrites,
  ) {}

  /** True while a question of the running reply awaits its answer. */
  get asking(): boolean {
    return this.waiters.size > 0;
  }

  /** The questions of `active` awaiting an answer. */
  waiting(active: ActiveReply): ToolCallBlock[] {
    return waitingCalls(active).filter((c) => this.waiters.has(c.id));
  }

  /** Parks the running reply on `question` and resolves with its result (see `ReplyEnv.ask`). */
  ask(
    active: ActiveReply,
    question: ToolCallBlock,
    check: ToolQuestion["check"],
    signal: AbortSignal,
  ): Promise<ToolResultBlock | undefined> {
    return new Promise((resolve) => {
      const withdraw = () => {
        if (waiter.answering || this.waiters.get(question.id) !== waiter) return;
        this.waiters.delete(question.id);
        signal.removeEventListener("abort", withdraw);
        if (!this.asking && this.writes.current === active) {
          this.s.head.setStatus("running", active.data.replyId);
        }
        resolve(undefined);
      };
      const waiter: Waiter = { resolve, check, answering: false, withdraw };
      if (signal.aborted) {
        resolve(undefined);
        return;
      }
      // Most sessions never ask: their map is made by the first question.
      if (this.waiters === NO_WAITERS) this.waiters = new Map();
      this.waiters.set(question.id, waiter);
      signal.addEventListener("abort", withdraw, { once: true });
      // A failed write stops the session (its hub reports it); the tool stops waiting.
      this.writes.parkRunning(active, this.waiting(active)).catch(withdraw);
    });
  }

  /** Withdraws every question, when the session stops. */
  withdrawAll(): void {
    for (const waiter of [...this.waiters.values()]) waiter.withdraw();
  }

  /** The running reply an answer to its questions is for; refused when the reply id is stale. */
  assertAsked(active: ActiveReply, replyId: string): ActiveReply {
    assertReply(active.data.replyId, replyId);
    return active;
  }

  /**
   * Checks an answer prepared for the running reply: it may only answer questions that wait (any
   * other call of a running reply awaits nothing yet), and each accepted form must pass its
   * asker's checks. Returns the commit that stores it and hands each result to its tool.
   */
  accept(active: ActiveReply, prepared: PreparedAnswer, what: string): QuestionCommit {
    const live = active.data.message;
    const known = new Set(live.content.flatMap((b) => (b.type === "tool_result" ? [b.id] : [])));
    const results = prepared.message.content.filter(
      (b): b is ToolResultBlock => b.type === "tool_result" && !known.has(b.id),
    );
    const refuse = (id: string) =>
      failedPrecondition(
        `reply ${active.data.replyId} is running; nothing awaits ${what} for ${id} yet`,
        [{ type: "SESSION_STATUS", subject: this.s.head.id, description: "running" }],
      );
    // Only the questions may change: a confirmation of a call, say, waits for the reply to park.
    const before = new Map(
      live.content.flatMap((b) => (b.type === "tool_call" ? [[b.id, b.state] as const] : [])),
    );
    for (const b of prepared.message.content) {
      if (b.type !== "tool_call" || before.get(b.id) === b.state) continue;
      const waiter = this.waiters.get(b.id);
      if (!waiter || waiter.answering || b.state !== "finished") throw refuse(b.id);
    }
    if (results.length === 0) throw refuse(active.data.replyId);
    const violations: FieldViolation[] = [];
    const waiters = results.map((result, i) => {
      const waiter = this.waiters.get(result.id);
      if (!waiter || waiter.answering) throw refuse(result.id);
      if (result.state === "success") {
        for (const p of waiter.check?.(answersOf(result)) ?? []) {
          violations.push({
            field: `${executionResultField(i)}.ask_user.${p.field}`,
            description: p.description,
          });
        }
      }
      return waiter;
    });
    if (violations.length > 0) throw invalidArgument(violations);
    return async (extra) => {
      for (const waiter of waiters) waiter.answering = true;
      for (const result of results) {
        const call = live.content.find(
          (b): b is ToolCallBlock => b.type === "tool_call" && b.id === result.id,
        );
        if (call) call.state = "finished";
        live.content.push(result);
        this.waiters.delete(result.id);
      }
      const replyId = active.data.replyId;
      this.s.head.setStatus(this.asking ? "awaiting_external_result" : "running", replyId);
      this.writes.stageCheckpoint(active);
      await this.s.hub.emitWith(replyId, prepared.events, { sync: true, extra });
      results.forEach((result, i) => waiters[i]!.resolve(result));
    };
  }
}

function answersOf(result: ToolResultBlock): AskUserAnswer[] {
  const answers = result.metadata?.answers;
  return Array.isArray(answers) ? (answers as AskUserAnswer[]) : [];
}
