import type { ChannelOptions } from "@grpc/grpc-js";

/** HTTP/2 keepalive pings the client sends while it has a call open (e.g. an attached session). */
export interface KeepaliveOptions {
  /** Interval between pings, in ms; default 30 000. */
  timeMs?: number;
  /** How long an answer may take before the connection counts as dead, in ms; default 20 000. */
  timeoutMs?: number;
}

/**
 * The client's default keepalive: a ping every 30 s keeps a quiet stream's connection inside the
 * idle timeouts of load balancers, NATs and firewalls (60 s and more is common), and a server that
 * stops answering is found within 50 s, when attached sessions reconnect.
 */
export const DEFAULT_CLIENT_KEEPALIVE: Required<KeepaliveOptions> = {
  timeMs: 30_000,
  timeoutMs: 20_000,
};

function checkMs(name: keyof KeepaliveOptions, value: number | undefined): number {
  const ms = value ?? DEFAULT_CLIENT_KEEPALIVE[name];
  if (!Number.isInteger(ms) || ms <= 0 || ms > 2_147_483_647) {
    throw new TypeError(
      `ClientOptions.keepalive.${name}: expected a positive whole number of milliseconds, got ${String(value)}`,
    );
  }
  return ms;
}

/**
 * The grpc-js channel options for `keepalive`: the defaults when it is unset, the given values over
 * the defaults, none when it is false. Throws `TypeError` naming a value that is not a positive
 * whole number of milliseconds.
 */
export function keepaliveChannelOptions(
  keepalive: KeepaliveOptions | false | undefined,
): ChannelOptions {
  if (keepalive === false) return {};
  return {
    "grpc.keepalive_time_ms": checkMs("timeMs", keepalive?.timeMs),
    "grpc.keepalive_timeout_ms": checkMs("timeoutMs", keepalive?.timeoutMs),
    // Pings only while a call is open: an idle channel has no stream to keep alive.
    "grpc.keepalive_permit_without_calls": 0,
  };
}
