import { z } from "zod";
import { duration } from "./duration.js";

/**
 * HTTP/2 keepalive of the server's connections. Every `time` the server pings each connection; a
 * peer that does not answer within `timeout` (a frozen process, a sleeping laptop, a network that
 * dropped it without a reset) is disconnected and its streams end, which frees their places under
 * `limits.streamsPerSession`. A dead peer is found within `time + timeout` (50 s by default): long
 * enough that a ping costs nothing and a busy client has time to answer, short enough that a
 * reconnecting client finds its places free within a minute. The server accepts the clients' own
 * keepalive pings at any interval (grpc-js sends no GOAWAY too_many_pings).
 */
export const keepaliveConfigSchema = z.strictObject({
  /** Ping each connection; false leaves dead peers' streams open until the OS notices. */
  enabled: z.boolean().default(true),
  /** Interval between the server's pings on each connection. */
  time: duration({ min: 100, max: 86_400_000, text: ["100ms", "24h"] }).default(30_000),
  /** How long the answer to a ping may take before the connection is closed. */
  timeout: duration({ min: 100, max: 600_000, text: ["100ms", "10m"] }).default(20_000),
});
export type KeepaliveConfig = z.infer<typeof keepaliveConfigSchema>;
export const KEEPALIVE_CONFIG_DEFAULT: KeepaliveConfig = {
  enabled: true,
  time: 30_000,
  timeout: 20_000,
};
