export { createServer, ListenError, type ParkwayServer, type ServerDeps } from "./create-server.js";
export type { BidiHandler, UnaryHandler } from "./adapters.js";
export type { CallContext } from "./call-context.js";
