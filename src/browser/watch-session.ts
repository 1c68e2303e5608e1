import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { AgentService } from "../generated-es/parkway/v1/agent_service_pb.js";
import type { ServerEvent } from "../generated-es/parkway/v1/events_pb.js";

/** Where a watch starts, how it ends, and how it survives a dropped stream. */
export interface WatchOptions {
  /** The last seq already seen; 0 (the default) replays from the start. */
  afterSeq?: bigint;
  /** Ends the watch: the iteration stops without an error. */
  signal?: AbortSignal;
  /**
   * Watch again after UNAVAILABLE, a network failure or a stream the server ended, for up to this
   * long (ms) without an event, after the last seq received, so no event is missed or repeated;
   * 0 disables it. Default 30 s.
   */
  reconnectForMs?: number;
}

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

/** Codes after which watching again can succeed. */
const RETRYABLE = new Set([Code.Unavailable, Code.Unknown, Code.Internal, Code.DeadlineExceeded]);

/**
 * The events of a session over Watch: those after `afterSeq`, the re-announced pending calls of a
 * parked reply (seq 0, replayed), then live events, until `signal` aborts. A stream that drops is
 * watched again after the last seq received (the pending calls are then announced again). Throws
 * the ConnectError of a refusal (NOT_FOUND for an unknown or deleted session, UNAUTHENTICATED), or
 * of the last failure once `reconnectForMs` has passed without an event.
 */
export async function* watchSession(
  agent: Client<typeof AgentService>,
  sessionId: string,
  options: WatchOptions = {},
): AsyncGenerator<ServerEvent> {
  const { signal } = options;
  const reconnectFor = options.reconnectForMs ?? 30_000;
  let lastSeq = options.afterSeq ?? 0n;
  let until: number | undefined;
  let delay = 100;
  while (!signal?.aborted) {
    const call = new AbortController();
    const cancel = () => call.abort();
    signal?.addEventListener("abort", cancel, { once: true });
    let failure: ConnectError;
    try {
      for await (const event of agent.watch(
        { sessionId, afterSeq: lastSeq },
        { signal: call.signal },
      )) {
        until = undefined;
        delay = 100;
        if (event.seq !== 0n) {
          if (event.seq <= lastSeq) continue;
          lastSeq = event.seq;
        }
        yield event;
      }
      failure = new ConnectError("the watch ended", Code.Unavailable);
    } catch (err) {
      if (signal?.aborted) return;
      failure = ConnectError.from(err);
      if (!RETRYABLE.has(failure.code)) throw failure;
    } finally {
      signal?.removeEventListener("abort", cancel);
      call.abort();
    }
    if (reconnectFor <= 0) throw failure;
    until ??= Date.now() + reconnectFor;
    if (Date.now() >= until) throw failure;
    await pause(delay, signal);
    delay = Math.min(delay * 2, 2000);
  }
}
