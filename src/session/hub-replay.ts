import type { EventLog } from "./event-log.js";
import { noteAnnounced } from "./reannouncement.js";
import type { StreamItem } from "./stored-event.js";
import type { StreamItems, Subscriber } from "./subscriber.js";

/** Most replayed events handed to a stream's writer at once. */
const REPLAY_BATCH = 256;

/** Where a stream's replay reads and stops. */
interface ReplayRange {
  afterSeq: number;
  upto: number;
  signal: AbortSignal;
}

const DONE: IteratorReturnResult<undefined> = { value: undefined, done: true };

/**
 * A stream's items: the stored events with `afterSeq` < seq ≤ `upto` (marked replayed), then what
 * `reannounce` gives for the calls the replay did not announce, then what the subscriber receives.
 * `detach` runs when the stream ends, however it ends.
 */
export function replayThenTail(
  log: EventLog,
  subscriber: Subscriber,
  range: ReplayRange,
  reannounce: (replayed: Set<string>) => StreamItem[],
  detach: () => void,
): StreamItems {
  return new ReplayThenTail(replayed(log, range, reannounce), subscriber, range.signal, detach);
}

/** The replay's batches, then the re-announcement. */
async function* replayed(
  log: EventLog,
  range: ReplayRange,
  reannounce: (replayed: Set<string>) => StreamItem[],
): AsyncGenerator<StreamItem[], void, undefined> {
  const replayed = new Set<string>();
  let batch: StreamItem[] = [];
  for await (const event of log.read(range.afterSeq, range.upto, range.signal)) {
    noteAnnounced(event, replayed);
    batch.push({ kind: "event", event: { ...event, replayed: true } });
    if (batch.length >= REPLAY_BATCH) {
      yield batch;
      batch = [];
    }
  }
  batch.push(...reannounce(replayed));
  if (batch.length > 0) yield batch;
}

/**
 * The items of `replayThenTail`. Once the replay is done, each `next` is the subscriber's own (no
 * generator in between): an idle stream waits on one promise.
 */
class ReplayThenTail implements StreamItems {
  private replay: AsyncGenerator<StreamItem[], void, undefined> | undefined;
  private tail: StreamItems | undefined;
  private detach: (() => void) | undefined;

  constructor(
    replay: AsyncGenerator<StreamItem[], void, undefined>,
    private readonly subscriber: Subscriber,
    private readonly signal: AbortSignal,
    detach: () => void,
  ) {
    this.replay = replay;
    this.detach = detach;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<StreamItem[], unknown>> {
    if (this.tail) return this.tail.next();
    if (this.replay) return this.fromReplay(this.replay);
    return Promise.resolve(DONE);
  }

  async return(): Promise<IteratorResult<StreamItem[], unknown>> {
    const { replay, tail } = this;
    this.replay = this.tail = undefined;
    try {
      await replay?.return();
      await tail?.return();
    } finally {
      this.end();
    }
    return DONE;
  }

  private async fromReplay(
    replay: AsyncGenerator<StreamItem[], void, undefined>,
  ): Promise<IteratorResult<StreamItem[], unknown>> {
    let next: IteratorResult<StreamItem[], void>;
    try {
      next = await replay.next();
    } catch (err) {
      this.replay = undefined;
      this.end();
      throw err;
    }
    if (!next.done) return next;
    this.replay = undefined;
    const detach = this.detach;
    if (!detach) return DONE;
    // From now on the subscriber's reader ends the stream.
    this.detach = undefined;
    this.tail = this.subscriber.items(this.signal, detach);
    return this.tail.next();
  }

  /** The stream ended: it leaves the hub, once. */
  private end(): void {
    const detach = this.detach;
    this.detach = undefined;
    detach?.();
  }
}
