import { isoNow } from "../common/iso-now.js";
import type { Msg, ToolCallBlock } from "../agent/types.js";
import type { Store, StoreBatch } from "../store/store.js";
import {
  MessageRecord,
  messageKey,
  type RequestData,
  RequestRecord,
  requestKey,
  type SessionStatus,
} from "./records.js";
import { type RequestTicket, writeRequest } from "./request-ids.js";
import { RequestIndex } from "./request-index.js";
import type { SessionHead } from "./session-head.js";

/** What a settled reply looks like to a waiting caller (the unary Reply RPC). */
export interface ReplySettled {
  message: Msg;
  status: SessionStatus;
  pending: ToolCallBlock[];
}

/** The first outcome of an input after which the reply parked, as its request record keeps it. */
export function parkedOutcome(parked: NonNullable<RequestData["parked"]>): ReplySettled {
  return {
    message: parked.notice,
    status: parked.status,
    pending: parked.notice.content.filter((b) => b.type === "tool_call"),
  };
}

/** An applied input's request id whose first outcome is the reply's next settlement. */
export interface AwaitingRequest {
  requestId: string;
  record: RequestData;
}

/** A request id being recorded with its input. */
export interface NotedRequest extends AwaitingRequest {
  write: (batch: StoreBatch) => void;
}

/** A caller waiting for a reply to finish or park. */
interface SettleWaiter {
  resolve: (settled: ReplySettled) => void;
  reject: (err: unknown) => void;
}

/**
 * What the callers of a session are waiting for: each reply's settlement (finished or parked), and
 * the first outcome of each input applied with a request id, which is the settlement that followed
 * it — in memory until that settlement is stored, then read from the store.
 */
export class ReplyOutcomes {
  // Both maps are made on first use and dropped once empty: most sessions in memory are idle.
  private waiters: Map<string, SettleWaiter[]> | undefined;
  /** The first outcome of inputs applied here whose reply has not settled (and stored it) yet. */
  private pending: Map<string, Promise<ReplySettled>> | undefined;
  /** The session's request ids, in memory (see `RequestIndex`). */
  readonly requests: RequestIndex;

  constructor(
    private readonly store: Store,
    private readonly head: SessionHead,
  ) {
    this.requests = new RequestIndex(head.nextRequest === 0);
  }

  /**
   * A promise of the reply's settlement. It rejects when the reply could not be stored; a caller
   * that does not wait for it (a Chat input) leaves that rejection handled.
   */
  whenSettled(replyId: string): Promise<ReplySettled> {
    const settled = new Promise<ReplySettled>((resolve, reject) => {
      const waiters = (this.waiters ??= new Map<string, SettleWaiter[]>());
      const list = waiters.get(replyId) ?? [];
      list.push({ resolve, reject });
      waiters.set(replyId, list);
    });
    settled.catch(() => undefined);
    return settled;
  }

  /** Tells those waiting for `replyId` how it settled (once it is stored). */
  settled(replyId: string, settled: ReplySettled, awaiting: AwaitingRequest[] | undefined): void {
    if (this.pending) {
      for (const { requestId } of awaiting ?? []) this.pending.delete(requestId);
      if (this.pending.size === 0) this.pending = undefined;
    }
    const waiters = this.waiters?.get(replyId) ?? [];
    this.waiters?.delete(replyId);
    if (this.waiters?.size === 0) this.waiters = undefined;
    for (const w of waiters) w.resolve(settled);
  }

  /** Rejects every caller waiting for a settlement with `error`. */
  rejectAll(error: Error): void {
    const waiters = [...(this.waiters?.values() ?? [])].flat();
    this.waiters = undefined;
    for (const w of waiters) w.reject(error);
  }

  /**
   * Records an input's request id: counts it in the session record (written with the input), and
   * returns what writes it into the input's batch. Its first outcome is the reply's next settlement:
   * a park stores the waiting notice with the id, an end is the final message stored as history
   * message `messageIndex`.
   */
  note(
    ticket: RequestTicket | undefined,
    replyId: string,
    messageIndex: number,
  ): NotedRequest | undefined {
    if (!ticket) return undefined;
    const record = {
      appliedAt: isoNow(),
      kind: ticket.kind,
      // Read when the record is written (the digest is computed then).
      get digest() {
        return ticket.digest;
      },
      replyId,
      messageIndex,
      order: this.head.takeRequest(),
    };
    this.requests.noted(ticket.requestId, ticket.forget.requestIds);
    return {
      requestId: ticket.requestId,
      record,
      write: (b) => writeRequest(b, this.head.id, ticket, record),
    };
  }

  /** Once an input's request id is stored: until the reply settles, a retry waits for `settled`. */
  awaitFirst(request: NotedRequest, settled: Promise<ReplySettled>): void {
    (this.pending ??= new Map<string, Promise<ReplySettled>>()).set(request.requestId, settled);
  }

  /**
   * The first outcome of an input applied before, from its request record: the waiting notice when
   * the reply parked after it, otherwise the reply's final message; while the reply still runs,
   * its settlement (`activeReplyId` is the reply running or parked now). Undefined when the record
   * predates outcomes (version 1).
   */
  async first(
    requestId: string,
    record: RequestData,
    activeReplyId: string | undefined,
  ): Promise<ReplySettled | undefined> {
    if (record.parked) return parkedOutcome(record.parked);
    const inMemory = this.pending?.get(requestId);
    if (inMemory) return inMemory;
    const sessionId = this.head.id;
    // The settlement may have been stored since the record was read.
    const now = (await this.store.get(RequestRecord, requestKey(sessionId, requestId))) ?? record;
    if (now.parked) return parkedOutcome(now.parked);
    if (now.messageIndex === undefined || now.replyId === undefined) return undefined;
    const final = await this.store.get(MessageRecord, messageKey(sessionId, now.messageIndex));
    if (final?.id === now.replyId) return { message: final, status: "idle", pending: [] };
    // Applied before a restart and not ended yet: its reply's recovery settles it.
    if (activeReplyId === now.replyId) return this.whenSettled(now.replyId);
    return undefined;
  }
}
