export {
  createServer,
  DEFAULT_SERVER_KEEPALIVE,
  ListenError,
  type ParkwayServer,
  type ServerDeps,
  type ServerKeepalive,
} from "./create-server.js";
export type { BidiHandler, UnaryHandler } from "./adapters.js";
export type { CallContext } from "./call-context.js";
export type { WebOptions } from "./web/web-options.js";
