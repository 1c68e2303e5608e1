import { type Metadata, status as Status } from "@grpc/grpc-js";
import type { AgentServiceClient } from "../generated/parkway/v1/agent_service.js";
import type { ServerEvent } from "../generated/parkway/v1/events.js";
import { fromServiceError } from "./errors.js";

/** Where a Watch starts, how it ends, and how it survives a restart. */
export interface WatchOptions {
  /** The last seq already seen; 0 (the default) replays from the start. */
  afterSeq?: number;
  /** Ends the watch (the iteration just stops). */
  signal?: AbortSignal;
  /**
   * Watch again after UNAVAILABLE (a server restart) for up to this long (ms), after the last seq
   * received, so no event is missed or repeated; 0 disables it. Default 30 s.
   */
  reconnectForMs?: number;
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * The events of a session over Watch: those after `afterSeq`, the re-announced pending calls of a
 * parked reply (seq 0, replayed), then live events, until `signal` aborts or the stream ends.
 * After a reconnect, the pending calls are announced again. Throws a `ParkwayClientError` when the
 * server refuses or ends the watch (NOT_FOUND for an unknown session).
 */
export async function* watchEvents(
  client: AgentServiceClient,
  metadata: () => Metadata,
  sessionId: string,
  options: WatchOptions = {},
): AsyncGenerator<ServerEvent> {
  const { signal } = options;
  const reconnectFor = options.reconnectForMs ?? 30_000;
  let lastSeq = options.afterSeq ?? 0;
  let until: number | undefined;
  let delay = 100;
  while (!signal?.aborted) {
    const call = client.watch({ sessionId, afterSeq: lastSeq }, metadata());
    const cancel = () => call.cancel();
    signal?.addEventListener("abort", cancel, { once: true });
    try {
      for await (const event of call as AsyncIterable<ServerEvent>) {
        until = undefined;
        delay = 100;
        if (event.seq !== 0) {
          if (event.seq <= lastSeq) continue;
          lastSeq = event.seq;
        }
        yield event;
      }
      return;
    } catch (err) {
      if (signal?.aborted) return;
      const error = fromServiceError(err as Error & { code?: number; metadata?: Metadata });
      if (error.code !== Number(Status.UNAVAILABLE) || reconnectFor <= 0) throw error;
      until ??= Date.now() + reconnectFor;
      if (Date.now() >= until) throw error;
      await pause(delay, signal);
      delay = Math.min(delay * 2, 2000);
    } finally {
      signal?.removeEventListener("abort", cancel);
      call.cancel();
    }
  }
}
