import { isParkwayError } from "../common/errors.js";
import type { Logger } from "../common/logger.js";
import { StorageFailure } from "../store/storage-failure.js";
import type { Store } from "../store/store.js";
import { RunningRecord } from "./records.js";
import type { RecoveredReply } from "./reply-endings.js";
import type { SessionActor } from "./session-actor.js";
import { sessionLog } from "./session-log.js";

/** Logs a reply recovery ended: its session, reply and trace, and what it was doing. */
function logRecovered(log: Logger, actor: SessionActor, recovered: RecoveredReply): void {
  const { data, interrupted } = recovered;
  log.info(
    {
      ...sessionLog(actor.id, data),
      agent: actor.agent.id,
      startedAt: data.startedAt,
      iteration: data.iteration,
      // No call under way: the reply was waiting for the model (or about to call it).
      doing: interrupted.length > 0 ? "tool_calls" : "model_call",
      interrupted,
    },
    "ended a reply that was running at the last stop",
  );
}

/**
 * Ends every reply that was running when the server stopped (see `ReplyLifecycle.recover`), one
 * session at a time through `withActor`, and logs each. Reads only the running index, whose size
 * is the number of replies that were running, never every parked reply. Returns how many it ended.
 */
export async function recoverReplies(
  store: Store,
  log: Logger,
  withActor: (sessionId: string, fn: (actor: SessionActor) => Promise<void>) => Promise<void>,
): Promise<number> {
  const ids: string[] = [];
  for await (const sessionId of store.keys(RunningRecord)) ids.push(sessionId);
  let ended = 0;
  for (const sessionId of ids) {
    try {
      await withActor(sessionId, async (actor) => {
        const recovered = await actor.serial(() => actor.recover());
        if (!recovered) return;
        ended += 1;
        logRecovered(log, actor, recovered);
      });
    } catch (err) {
      // A session that lost data stays as it is (it is reported when used); a failed store stops.
      // A session another node serves (several nodes on one database) is that node's to end.
      const elsewhere = isParkwayError(err, "unavailable");
      if (!(err instanceof StorageFailure) && !isParkwayError(err, "data_loss") && !elsewhere) {
        log.error({ err, session: sessionId }, "could not recover the reply");
      }
    }
  }
  return ended;
}
