import type { ParkwayClient } from "../../client/index.js";

/** gRPC channel connectivity states (grpc.connectivity). */
const READY = 2;
const SHUTDOWN = 4;

/**
 * Watches the client's channel and reports when an established connection is lost and when it is
 * back (the session re-attaches by itself in between). Stops when the channel shuts down or `stop`
 * is called.
 */
export function watchConnection(
  client: ParkwayClient,
  on: { lost(): void; back(): void },
): { stop(): void } {
  const channel = client.agentService.getChannel();
  let stopped = false;
  let wasReady = false;
  let lost = false;
  const watch = (state: number) => {
    if (stopped || state === SHUTDOWN) return;
    if (state === READY) {
      if (lost) on.back();
      wasReady = true;
      lost = false;
    } else if (wasReady && !lost) {
      lost = true;
      on.lost();
    }
    try {
      channel.watchConnectivityState(state, Number.POSITIVE_INFINITY, () =>
        watch(channel.getConnectivityState(false)),
      );
    } catch {
      // the channel was closed
    }
  };
  watch(channel.getConnectivityState(false));
  return {
    stop() {
      stopped = true;
    },
  };
}
