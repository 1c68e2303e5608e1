import { setMaxListeners } from "node:events";
import type { EventBody } from "../agent/events.js";
import { interruptCalls } from "../agent/reply-loop.js";
import type { Msg, ToolCallBlock } from "../agent/types.js";
import type { StoreBatch } from "../store/store.js";
import { pendingCalls } from "./pending-calls.js";
import {
  ExpiryRecord,
  expiryKey,
  type ReplyData,
  ReplyRecord,
  RunningRecord,
  type SessionStatus,
} from "./records.js";
import type { AwaitingRequest } from "./reply-outcomes.js";
import type { ReplyTelemetry } from "./reply-telemetry.js";

/** A reply being run or parked, with what only lives in memory. */
export interface ActiveReply {
  data: ReplyData;
  /** Stops the model call and the start of further tools. */
  controller: AbortController;
  /** Stops the tools that are running. */
  tools: AbortController;
  /** The run under way; undefined while the reply is parked. */
  task?: Promise<void>;
  /** Request ids applied since the reply last settled: a park records its notice as theirs. */
  awaiting?: AwaitingRequest[];
  /** Its metrics and spans, when telemetry is on. */
  observer?: ReplyTelemetry;
  /**
   * A reply just started, while its start is being written: the user message it answers (at
   * `index` in the history) and the write, which settles once it is stored or has failed. The run
   * takes it (and clears it) to call the model without waiting for that write.
   */
  starting?: { index: number; user: Msg; written: Promise<unknown> };
}

/**
 * A reply's state in memory, its controllers made on first use: a start's REPLY_START goes out
 * before they are (making the two took ≈ 18 µs of the ≈ 100 µs of the server's work before it).
 */
class Reply implements ActiveReply {
  task?: Promise<void>;
  awaiting?: AwaitingRequest[];
  observer?: ReplyTelemetry;
  starting?: ActiveReply["starting"];
  private stop: AbortController | undefined;
  private stopTools: AbortController | undefined;

  constructor(public data: ReplyData) {}

  get controller(): AbortController {
    return (this.stop ??= new AbortController());
  }
  set controller(controller: AbortController) {
    this.stop = controller;
  }
  get tools(): AbortController {
    return (this.stopTools ??= toolsController());
  }
  set tools(controller: AbortController) {
    this.stopTools = controller;
  }
}

/** A reply read from the store or just started, not running yet. */
export function activeReply(data: ReplyData): ActiveReply {
  return new Reply(data);
}

/**
 * What stops a reply's tool calls. Every call of a batch listens to its signal while it runs, as
 * many at once as the model asked for, each removing its listener when it ends: no bound on them.
 */
export function toolsController(): AbortController {
  const tools = new AbortController();
  setMaxListeners(0, tools.signal);
  return tools;
}

/** Calls of the reply awaiting an answer (asking or submitted). */
export function waitingCalls(active: ActiveReply | undefined): ToolCallBlock[] {
  return pendingCalls(active?.data.message);
}

/** The status of a session whose reply parked on `pending`. */
export function parkedStatus(pending: readonly ToolCallBlock[]): SessionStatus {
  return pending.some((c) => c.state === "asking")
    ? "awaiting_permission"
    : "awaiting_external_result";
}

/**
 * The reply record as it is now (a checkpoint at `lastSeq`), the parked calls' deadlines, and
 * the running index, into a batch.
 */
export function checkpoint(
  batch: StoreBatch,
  sessionId: string,
  active: ActiveReply,
  lastSeq: number,
): void {
  active.data.snapshotSeq = lastSeq;
  batch.put(ReplyRecord, sessionId, active.data); // encoded (copied) at once
  if (active.data.state === "parked") batch.del(RunningRecord, sessionId);
  for (const call of waitingCalls(active)) {
    if (call.expiresAt) {
      batch.put(ExpiryRecord, expiryKey(call.expiresAt, sessionId), {
        sessionId,
        at: call.expiresAt,
      });
    }
  }
}

/** Interrupts every unfinished call; returns the events, to be written with the reply's end. */
export function interruptUnfinished(active: ActiveReply, text?: string): EventBody[] {
  const events: EventBody[] = [];
  interruptCalls({ message: active.data.message, emit: (body) => events.push(body) }, text);
  active.data.message.finishedReason = "interrupted";
  return events;
}

/** The calls of the parked reply whose deadline is at or before `now`. */
export function dueCalls(active: ActiveReply, now: Date): ToolCallBlock[] {
  return waitingCalls(active).filter(
    (c) => c.expiresAt !== undefined && Date.parse(c.expiresAt) <= now.getTime(),
  );
}
