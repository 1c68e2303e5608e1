import { ParkwayError } from "../common/errors.js";
import type { Store } from "../store/store.js";
import { pendingCalls } from "./pending-calls.js";
import {
  DamagedSessionRecord,
  EventRecord,
  eventKey,
  MessageRecord,
  messageKey,
  type ReplyData,
  ReplyRecord,
  type SessionData,
} from "./records.js";

/** DATA_LOSS for a session whose stored records disagree; `problem` says what disagrees. */
export function sessionDataLoss(sessionId: string, problem: string): ParkwayError {
  return new ParkwayError(
    "data_loss",
    `session ${sessionId} has lost data: ${problem}; delete it, or restore the data directory from a backup`,
    { reason: "SESSION_DATA_LOSS", metadata: { session: sessionId } },
  );
}

/** The end of a session's event keys ("/" sorts before "0"). */
const eventsEnd = (sessionId: string) => `${sessionId}0`;

/** A chunk of stored events, as the checks read it. */
type EventChunk = { events: readonly { seq: number }[] };

/** The value of a read issued ahead, or its error thrown where the check reads it. */
function valueOf<T>(read: PromiseSettledResult<T>): T {
  if (read.status === "rejected") throw read.reason;
  return read.value;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/**
 * What `sessionProblem` reads besides the session and its reply, all issued at once (a store on a
 * database answers them in one round trip's time rather than one after another): the repair mark,
 * the key of the last stored event, the first stored events after the compacted range (unless
 * `full`: then every one is read as it is checked, not held at once), and the last history message.
 */
function readAround(store: Store, data: SessionData, full: boolean) {
  const id = data.id;
  const from = data.compactedThrough ?? 0;
  return Promise.allSettled([
    store.get(DamagedSessionRecord, id),
    collect(
      store.keys(EventRecord, { gte: eventKey(id, 0), lt: eventsEnd(id), reverse: true, limit: 1 }),
    ),
    data.lastSeq > from && !full
      ? collect(store.entries(EventRecord, { ...eventsAfter(id, from), limit: 1 }))
      : Promise.resolve([]),
    data.messageCount > 0
      ? store.get(MessageRecord, messageKey(id, data.messageCount - 1))
      : Promise.resolve(undefined),
  ]);
}

/** The range of a session's events after `from`. */
const eventsAfter = (id: string, from: number) => ({ gt: eventKey(id, from), lt: eventsEnd(id) });

/**
 * The session's reply and what disagrees among its stored records (see `sessionProblem`), the
 * reply read together with the other records. Read `data` first: a write that lands during these
 * reads changes the session record too, so reading it again tells such a write from a loss.
 */
export async function readReplyAndProblem(
  store: Store,
  data: SessionData,
): Promise<{ reply: ReplyData | undefined; problem: string | undefined }> {
  const [[read], around] = await Promise.all([
    Promise.allSettled([store.get(ReplyRecord, data.id)]),
    readAround(store, data, false),
  ]);
  // The reply is read before the checks, as it was read before the session's other records.
  const reply = valueOf(read);
  return { reply, problem: await checkRecords(store, data, reply, around, false) };
}

/**
 * What disagrees among a session's stored records, or undefined when they agree. Reads a handful
 * of keys, plus the events of a parked reply (to find the announcement of each pending call):
 *
 * - a mark left by `parkway repair`;
 * - the reply: present exactly when the session names one, with its id, parked when the session
 *   awaits an answer, and no newer than the session's last seq;
 * - the event log: its last event is the session's last seq, and its first stored event follows
 *   the compacted range (with `full`, every event in between, gap-free);
 * - the history: `messageCount` messages, the last of them present;
 * - a parked reply: no event of it after its state was stored, and each pending call announced by
 *   a REQUIRE_* event.
 */
export async function sessionProblem(
  store: Store,
  data: SessionData,
  reply: ReplyData | undefined,
  options: { full?: boolean } = {},
): Promise<string | undefined> {
  const full = options.full === true;
  return checkRecords(store, data, reply, await readAround(store, data, full), full);
}

/**
 * The checks of `sessionProblem` on the records read ahead, in their order: a read that failed
 * throws only where its check comes, so the first problem found is the one reported.
 */
async function checkRecords(
  store: Store,
  data: SessionData,
  reply: ReplyData | undefined,
  around: Awaited<ReturnType<typeof readAround>>,
  full: boolean,
): Promise<string | undefined> {
  const [mark, lastKeys, chunks, lastMessage] = around;
  const found = valueOf(mark);
  if (found) return found.problem;
  if (data.replyId !== undefined && reply?.replyId !== data.replyId) {
    return reply
      ? `the session's reply is ${data.replyId} but the stored reply is ${reply.replyId}`
      : `its reply ${data.replyId} is missing`;
  }
  if (data.replyId === undefined && reply) {
    return `the session is idle but reply ${reply.replyId} is stored as ${reply.state}`;
  }
  if (
    reply &&
    data.status.startsWith("awaiting") &&
    reply.state !== "parked" &&
    !askedWhileRunning(reply)
  ) {
    return `the session is ${data.status} but its reply is ${reply.state}`;
  }
  if (reply && reply.snapshotSeq > data.lastSeq) {
    return `its reply was stored at seq ${reply.snapshotSeq}, after the session's last seq ${data.lastSeq}`;
  }
  const id = data.id;
  const problem = await eventsProblem(data, valueOf(lastKeys)[0], () =>
    full
      ? store.entries(EventRecord, eventsAfter(id, data.compactedThrough ?? 0))
      : valueOf(chunks),
  );
  if (problem) return problem;
  if (data.messageCount > 0 && !valueOf(lastMessage)) {
    return `history message ${data.messageCount - 1} is missing`;
  }
  if (reply?.state === "parked") return parkedProblem(store, data, reply);
  return undefined;
}

/**
 * The event log against the session: `lastKey` is the key of the last stored event, `chunks` the
 * stored events after the compacted range (the first chunk of them, or every one for a full check).
 */
async function eventsProblem(
  data: SessionData,
  lastKey: string | undefined,
  chunks: () => Iterable<[string, EventChunk]> | AsyncIterable<[string, EventChunk]>,
): Promise<string | undefined> {
  const id = data.id;
  const from = data.compactedThrough ?? 0;
  const lastStored = lastKey === undefined ? from : Number(lastKey.slice(id.length + 1));
  if (lastStored > data.lastSeq) {
    return `event ${lastStored} is stored, after the session's last seq ${data.lastSeq}`;
  }
  if (data.lastSeq <= from) return undefined;
  if (afterSkips(data, lastStored + 1) <= data.lastSeq) {
    return `events ${lastStored + 1}..${data.lastSeq} are missing below its last seq ${data.lastSeq}`;
  }
  let expected = from + 1;
  for await (const [, chunk] of chunks()) {
    for (const event of chunk.events) {
      if (event.seq < expected) continue;
      if (event.seq > expected) expected = afterSkips(data, expected);
      if (event.seq > expected) return `event ${expected} is missing below its last seq`;
      expected += 1;
    }
  }
  return undefined;
}

/** The first seq from `seq` on that was not skipped after a crash (see `SeqEpoch`). */
function afterSkips(data: SessionData, seq: number): number {
  for (const [first, last] of data.skippedSeqs ?? []) if (first === seq) seq = last + 1;
  return seq;
}

/** A parked reply's events after its stored state, and the announcement of its pending calls. */
async function parkedProblem(
  store: Store,
  data: SessionData,
  reply: ReplyData,
): Promise<string | undefined> {
  const announced = new Set<string>();
  scan: for await (const [, chunk] of store.entries(EventRecord, {
    gt: eventKey(data.id, data.compactedThrough ?? 0),
    lte: eventKey(data.id, data.lastSeq),
    reverse: true,
  })) {
    for (const event of [...chunk.events].reverse()) {
      if (event.replyId !== reply.replyId) continue;
      if (event.seq > reply.snapshotSeq) {
        return `its parked reply was stored at seq ${reply.snapshotSeq}, older than its event ${event.seq}`;
      }
      const body = event.body as { type: string; toolCalls?: { id: string }[] };
      if (body.type === "require_user_confirm" || body.type === "require_external_execution") {
        for (const call of body.toolCalls ?? []) announced.add(call.id);
      }
      if (body.type === "reply_start") break scan;
    }
  }
  const missing = pendingCalls(reply.message).find((call) => !announced.has(call.id));
  return missing ? `pending tool call ${missing.id} has no REQUIRE event` : undefined;
}

/** A running reply parked on questions its tools asked (AskUser calls with `askedBy`). */
function askedWhileRunning(reply: ReplyData): boolean {
  return pendingCalls(reply.message).some((c) => c.askedBy !== undefined);
}
