import type { SessionManager } from "../session/session-manager.js";
import type { SessionStream } from "../session/session-stream.js";
import type { StreamItem } from "../session/stored-event.js";
import type { CallContext } from "./call-context.js";
import type { ServerEvent } from "../generated/parkway/v1/events.js";
import { toRpcStatus } from "./errors.js";
import { eventToPb } from "./mappers/events.js";

/** One item of an attached stream (an event, or an input's acknowledgement) as a ServerEvent. */
export function itemToPb(item: StreamItem, sessionId: string): ServerEvent {
  if (item.kind === "event") return eventToPb(item.event);
  return {
    id: "",
    seq: 0,
    sessionId,
    replyId: "",
    createdAt: new Date(),
    replayed: false,
    event: {
      $case: "inputAck",
      value: {
        requestId: item.ack.requestId,
        status:
          item.ack.error === undefined
            ? { code: 0, message: "", details: [] }
            : toRpcStatus(item.ack.error),
        lastSeq: item.ack.lastSeq ?? 0,
      },
    },
  };
}

/** True for the event that ends or parks a reply. */
export function endsReply(item: StreamItem): boolean {
  return (
    item.kind === "event" &&
    (item.event.body.type === "reply_end" || item.event.body.type === "reply_parked")
  );
}

/** The open streams (Chat and Watch), for the streams gauge. */
export interface OpenStreams {
  open: number;
}

/**
 * Attaches a call's stream to a session (replay after `afterSeq`, re-announced pending calls, live
 * events), counted as open until `attachedEvents` ends; past its backlog the stream ends at once
 * (with the subscriber's error), not when its client reads again. `afterSeqField` names `afterSeq`
 * in the call's request (Chat's `attach.after_seq`, Watch's `after_seq`).
 */
export async function attachCall(
  manager: SessionManager,
  ctx: CallContext,
  streams: OpenStreams,
  sessionId: string,
  afterSeq: number,
  afterSeqField: string,
): Promise<SessionStream> {
  const { tenant } = ctx.principal;
  const attached = await manager.attach(tenant, sessionId, afterSeq, ctx.signal, afterSeqField);
  streams.open += 1;
  attached.subscriber.whenFailed((err) => ctx.fail(err));
  return attached;
}

const DONE: IteratorReturnResult<undefined> = { value: undefined, done: true };

/**
 * The ServerEvents of a stream `attachCall` attached, in batches: `first`, then its items, each
 * batch handed to `seen` once written (when the next batch is asked for); the session is let go
 * (and the stream no longer counted) however the call ends. A plain object rather than an async
 * generator: a stream waiting for its next event holds one promise, not a suspended generator.
 */
export class AttachedEvents implements AsyncIterableIterator<readonly ServerEvent[]> {
  private first: readonly ServerEvent[] | undefined;
  /** The last batch handed out, for `seen` once the next one is asked for. */
  private unseen: readonly StreamItem[] | undefined;
  private finished = false;

  constructor(
    private readonly attached: SessionStream,
    private readonly sessionId: string,
    private readonly streams: OpenStreams,
    first: readonly ServerEvent[] = [],
    private readonly seen?: (items: readonly StreamItem[]) => void,
  ) {
    if (first.length > 0) this.first = first;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<readonly ServerEvent[], undefined>> {
    if (this.finished) return Promise.resolve(DONE);
    const first = this.first;
    if (first) {
      this.first = undefined;
      return Promise.resolve({ value: first, done: false });
    }
    const unseen = this.unseen;
    if (unseen) {
      this.unseen = undefined;
      this.seen?.(unseen);
    }
    return this.attached.items.next().then(
      (next) => this.batch(next),
      (err: unknown) => {
        this.finish();
        throw err;
      },
    );
  }

  async return(): Promise<IteratorResult<readonly ServerEvent[], undefined>> {
    if (this.finished) return DONE;
    this.first = this.unseen = undefined;
    try {
      await this.attached.items.return();
    } finally {
      this.finish();
    }
    return DONE;
  }

  private batch(
    next: IteratorResult<StreamItem[], unknown>,
  ): IteratorResult<readonly ServerEvent[], undefined> {
    if (next.done) {
      this.finish();
      return DONE;
    }
    const items = next.value;
    if (this.seen) this.unseen = items;
    return { value: items.map((item) => itemToPb(item, this.sessionId)), done: false };
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.streams.open -= 1;
    this.attached.detach();
  }
}

/**
 * An async iterable whose iterator `start` makes on the first `next` (a call that must read or
 * attach before it streams; none: nothing to stream); from then on every `next` is the started
 * iterator's own.
 */
export function lazyStream<T>(
  start: () => Promise<AsyncIterator<T> | undefined>,
): AsyncIterableIterator<T> {
  return new LazyStream(start);
}

class LazyStream<T> implements AsyncIterableIterator<T> {
  private inner: AsyncIterator<T> | undefined;
  private finished = false;

  constructor(private start: (() => Promise<AsyncIterator<T> | undefined>) | undefined) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.inner) return this.inner.next();
    return this.begin();
  }

  async return(): Promise<IteratorResult<T>> {
    this.finished = true;
    this.start = undefined;
    const inner = this.inner;
    this.inner = undefined;
    await inner?.return?.();
    return DONE;
  }

  private async begin(): Promise<IteratorResult<T>> {
    const start = this.start;
    this.start = undefined;
    if (!start || this.finished) return DONE;
    let inner: AsyncIterator<T> | undefined;
    try {
      inner = await start();
    } catch (err) {
      this.finished = true;
      throw err;
    }
    if (!inner) {
      this.finished = true;
      return DONE;
    }
    if (this.finished) {
      // Returned while it started: what it started ends now.
      await inner.return?.();
      return DONE;
    }
    this.inner = inner;
    return inner.next();
  }
}
