import type { EventLog } from "./event-log.js";
import { noteAnnounced } from "./reannouncement.js";
import type { StreamItem } from "./stored-event.js";
import type { Subscriber } from "./subscriber.js";

/** Most replayed events handed to a stream's writer at once. */
const REPLAY_BATCH = 256;

/**
 * A stream's items: the stored events with `afterSeq` < seq ≤ `upto` (marked replayed), then what
 * `reannounce` gives for the calls the replay did not announce, then what the subscriber receives.
 * `detach` runs when the stream ends, however it ends.
 */
export async function* replayThenTail(
  log: EventLog,
  subscriber: Subscriber,
  range: { afterSeq: number; upto: number; signal: AbortSignal },
  reannounce: (replayed: Set<string>) => StreamItem[],
  detach: () => void,
): AsyncGenerator<StreamItem[]> {
  try {
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
    yield* subscriber.items(range.signal);
  } finally {
    detach();
  }
}
