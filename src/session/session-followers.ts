import { notFound, ParkwayError } from "../common/errors.js";
import type { StoreSignals } from "../store/signals.js";
import type { Store } from "../store/store.js";
import { checkAttach } from "./attach-checks.js";
import { EventLog } from "./event-log.js";
import { pendingCalls } from "./pending-calls.js";
import { noteAnnounced, reannouncement } from "./reannouncement.js";
import { type ReplyData, SessionRecord } from "./records.js";
import { lastSeqShown } from "./lease-seqs.js";
import { firstAvailableSeq } from "./retention.js";
import { LeaseRecord } from "./session-leases.js";
import type { SessionReader } from "./session-reader.js";
import { ackItem, type SessionStream } from "./session-stream.js";
import type { StoredEvent, StreamItem } from "./stored-event.js";
import { Subscriber } from "./subscriber.js";
import { eventsTopic } from "./signal-topics.js";

/** Most replayed events handed to a stream's writer at once. */
const REPLAY_BATCH = 256;

/** What a follower reads a session with. */
export interface FollowerDeps {
  store: Store;
  reader: SessionReader;
  signals: StoreSignals;
  /** A follower reads again this often even without a signal (a lost notification). */
  pollMs: number;
}

/** What a stream may ask of a session (config `limits`). */
export interface FollowLimits {
  streamsPerSession?: number | undefined;
  streamBacklogEvents?: number | undefined;
}

/**
 * The parked reply's pending calls (or the questions a running reply's tools asked), as stored,
 * when the reply record is no newer than the session record read before it (otherwise the events
 * that announce them come after `lastSeq`, and the stream receives them anyway).
 */
function storedPending(reply: ReplyData | undefined, lastSeq: number) {
  if (!reply || reply.snapshotSeq > lastSeq) return undefined;
  const calls = pendingCalls(reply.message).filter(
    (c) => reply.state === "parked" || c.askedBy !== undefined,
  );
  return calls.length > 0 ? { replyId: reply.replyId, calls } : undefined;
}

/**
 * Streams that follow a session through the store, for several nodes on one database: a stream
 * attached to a node that does not run the session's reply reads the session's events by seq as
 * they are committed, woken by the signal its writer sends after each write (and on a timer, so a
 * lost signal delays an event but never loses it). Like a stream attached to the session's own
 * hub it gets every stored event after `after_seq`, then the pending calls announced again, then
 * live events, in seq order with no gap and no duplicate; it ends with NOT_FOUND once the session
 * is deleted, and with FAILED_PRECONDITION EVENTS_COMPACTED if it fell behind retention.
 */
export class SessionFollowers {
  /** Each session's streams on this node, with what hands them events stored here. */
  private readonly streams = new Map<
    string,
    Map<Subscriber, (events: readonly StoredEvent[]) => void>
  >();

  constructor(private readonly deps: FollowerDeps) {
    deps.store.onFailure((failure) => this.closeAll(failure));
  }

  /** Streams following `sessionId` on this node. */
  count(sessionId: string): number {
    return this.streams.get(sessionId)?.size ?? 0;
  }

  /** Ends every stream with `error` (the store failed, the server stops). */
  closeAll(error: Error): void {
    for (const set of this.streams.values()) for (const sub of set.keys()) sub.close(error);
  }

  /**
   * Hands events this node stored to the session's streams here, which take them as they are
   * when they follow on from what they have (and read the store otherwise); with none, they read.
   */
  offer(sessionId: string, events: readonly StoredEvent[]): void {
    for (const take of this.streams.get(sessionId)?.values() ?? []) take(events);
  }

  /** Attaches a stream after `afterSeq`, the request's `afterSeqField` (see the class). */
  async follow(
    tenant: string,
    sessionId: string,
    afterSeq: number,
    signal: AbortSignal,
    limits: FollowLimits,
    afterSeqField: string,
  ): Promise<SessionStream> {
    const { store, reader, signals, pollMs } = this.deps;
    const { data, reply } = await reader.read(sessionId, tenant);
    const upto = data.lastSeq;
    // A client may have seen events that are not stored yet (or never will be: see `resumeUnder`).
    const shown =
      afterSeq > upto ? lastSeqShown(data, await store.get(LeaseRecord, sessionId)) : upto;
    checkAttach(
      {
        id: sessionId,
        firstAvailableSeq: firstAvailableSeq(data),
        lastSeq: shown,
        attached: this.count(sessionId),
      },
      afterSeq,
      limits.streamsPerSession,
      afterSeqField,
    );
    const subscriber = new Subscriber(limits.streamBacklogEvents);
    const log = new EventLog(store, sessionId, upto);
    let cursor = Math.max(upto, afterSeq);
    let running = data.status === "running";
    let reading: Promise<void> | undefined;
    let again = false;

    const readNew = async (): Promise<void> => {
      let read = 0;
      for await (const event of log.read(cursor, Number.MAX_SAFE_INTEGER)) {
        if (event.seq !== cursor + 1 && !(await skipped(store, sessionId, cursor, event.seq))) {
          throw fellBehind(sessionId, cursor, event.seq);
        }
        cursor = event.seq;
        read++;
        running = runsAfter(event, running);
        if (!subscriber.push({ kind: "event", event })) return;
      }
      if (read === 0 && !(await store.get(SessionRecord, sessionId))) {
        subscriber.close(notFound("session", sessionId));
      }
    };
    // One read at a time; a wake during a read reads once more after it.
    const catchUp = (): Promise<void> => {
      if (reading) {
        again = true;
        return reading;
      }
      reading = (async () => {
        do {
          again = false;
          if (subscriber.closed) return;
          await readNew().catch((err: unknown) => subscriber.close(readFailure(err)));
        } while (again);
      })().finally(() => (reading = undefined));
      return reading;
    };
    const wake = () => void catchUp();
    const take = (events: readonly StoredEvent[]) => {
      const fresh = events.filter((e) => e.seq > cursor);
      if (reading || fresh.length === 0 || fresh[0]!.seq !== cursor + 1) {
        if (events.length === 0 || fresh.length > 0) wake();
        return;
      }
      for (const event of fresh) {
        cursor = event.seq;
        running = runsAfter(event, running);
        if (!subscriber.push({ kind: "event", event })) return;
      }
    };

    let set = this.streams.get(sessionId);
    if (!set)
      this.streams.set(
        sessionId,
        (set = new Map<Subscriber, (events: readonly StoredEvent[]) => void>()),
      );
    set.set(subscriber, take);
    const unwatch = signals.watch(eventsTopic(sessionId), wake);
    const timer = setInterval(wake, pollMs).unref();
    let detached = false;
    const detach = () => {
      if (detached) return;
      detached = true;
      unwatch();
      clearInterval(timer);
      set.delete(subscriber);
      if (set.size === 0 && this.streams.get(sessionId) === set) this.streams.delete(sessionId);
    };
    wake();

    const pending = storedPending(reply, upto);
    async function* items(): AsyncGenerator<StreamItem[]> {
      try {
        const replayed = new Set<string>();
        let batch: StreamItem[] = [];
        for await (const event of log.read(Math.min(afterSeq, upto), upto, signal)) {
          noteAnnounced(event, replayed);
          batch.push({ kind: "event", event: { ...event, replayed: true } });
          if (batch.length >= REPLAY_BATCH) {
            yield batch;
            batch = [];
          }
        }
        batch.push(...reannouncement(sessionId, pending, new Set(), replayed));
        if (batch.length > 0) yield batch;
        yield* subscriber.items(signal);
      } finally {
        detach();
      }
    }
    return {
      lastSeq: upto,
      items: items(),
      subscriber,
      get running() {
        return running;
      },
      ack(requestId, error, writtenSeq) {
        // The events the input caused were committed before its outcome: they go first. Those of
        // an input applied here were handed over as they were written: pushed already, unless a
        // read was under way.
        if (writtenSeq !== undefined && cursor >= writtenSeq) {
          subscriber.push(ackItem(requestId, error));
          return;
        }
        void catchUp().then(() => subscriber.push(ackItem(requestId, error)));
      },
      detach,
    };
  }
}

/** Whether a reply runs once `event` happened. */
function runsAfter(event: StoredEvent, before: boolean): boolean {
  const type = event.body.type;
  if (type === "reply_end" || type === "reply_parked") return false;
  return type === "reply_start" ? true : before;
}

/**
 * Whether the seqs between `cursor` and `next` were never used: skipped (see `resumeUnder`), as the
 * session's record, read after the event at `next`, says.
 */
async function skipped(
  store: Store,
  sessionId: string,
  cursor: number,
  next: number,
): Promise<boolean> {
  const ranges = (await store.get(SessionRecord, sessionId))?.skippedSeqs ?? [];
  let seq = cursor + 1;
  for (let found = true; found && seq < next;) {
    const range = ranges.find(([first, last]) => first <= seq && seq <= last);
    found = range !== undefined;
    if (range) seq = range[1] + 1;
  }
  return seq >= next;
}

/** A stream whose next events retention removed before it read them. */
function fellBehind(sessionId: string, cursor: number, next: number): ParkwayError {
  return new ParkwayError(
    "failed_precondition",
    `events ${cursor + 1}–${next - 1} of session ${sessionId} were compacted before this stream read them; attach again`,
    { reason: "EVENTS_COMPACTED", metadata: { first_available_seq: String(next) } },
  );
}

/** A read of the store that failed, as the stream reports it. */
function readFailure(err: unknown): Error {
  if (err instanceof ParkwayError) return err;
  return new ParkwayError(
    "unavailable",
    "the server could not read the session's events; reattach",
    {},
    { cause: err },
  );
}
