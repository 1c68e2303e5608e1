import type { ConnectNodeAdapterOptions } from "@connectrpc/connect-node";

/** A request listener for node:http and node:http2 alike, as connect-node takes and returns. */
export type NodeHandler = NonNullable<ConnectNodeAdapterOptions["fallback"]>;
export type NodeRequest = Parameters<NodeHandler>[0];
export type NodeResponse = Parameters<NodeHandler>[1];
