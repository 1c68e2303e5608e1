import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createSecureServer, type Http2SecureServer } from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import { createContextValues } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { TlsMaterial } from "../../config/read-tls-files.js";
import { connectRoutes, type WebService } from "./connect-routes.js";
import type { AnswerLink } from "./answer-link.js";
import { answerRoute } from "./answer-route.js";
import { withCors } from "./cors.js";
import { staticFiles } from "./static-files.js";
import { peerKey } from "./web-call.js";
import type { WebOptions } from "./web-options.js";

/** The web port: Connect (JSON and binary) and gRPC-web, plus the console's files. */
export interface WebServer {
  /** Binds `HOST:PORT` (port 0 picks one); resolves with the port, rejects with the system error. */
  listen(address: string): Promise<number>;
  /** Takes no new connections; those open go on. */
  stopAccepting(): void;
  /** Closes every connection still open. */
  destroyConnections(): void;
}

export interface WebServerDeps extends WebOptions {
  services: readonly WebService[];
  /** Largest request message accepted, in bytes. */
  maxMessageBytes: number;
  /** Served as HTTPS (HTTP/2 with HTTP/1.1 fallback) when set, with mTLS when it has `clientCa`. */
  tls?: TlsMaterial | undefined;
  staticDir: string;
  /** Answers `POST /answers/<token>` (answer links); none: those paths are static files. */
  answerLink?: AnswerLink | undefined;
}

function peerOf(socket: Socket | undefined): string {
  const address = socket?.remoteAddress ?? "unknown";
  const shown = address.includes(":") ? `[${address}]` : address;
  return `${shown}:${socket?.remotePort ?? 0}`;
}

/** Builds the web port's HTTP server; nothing is bound until `listen`. */
export function createWebServer(deps: WebServerDeps): WebServer {
  const handler = connectNodeAdapter({
    routes: connectRoutes(deps.services),
    readMaxBytes: deps.maxMessageBytes,
    // A JSON request with a field or an enum value the contract does not have is refused, naming
    // it (as protobuf's JSON mapping does by default): a misspelled mode must not be dropped.
    jsonOptions: { ignoreUnknownFields: false },
    // Connect and gRPC-web; gRPC itself is the gRPC port's.
    grpc: false,
    fallback: deps.answerLink
      ? answerRoute(deps.answerLink, staticFiles(deps.staticDir))
      : staticFiles(deps.staticDir),
    contextValues: (req) => createContextValues().set(peerKey, peerOf(req.socket)),
  });
  const listener = withCors(deps.corsOrigins ?? [], handler);
  const tls = deps.tls;
  const server: HttpServer | Http2SecureServer = tls
    ? createSecureServer(
        {
          key: tls.key,
          cert: tls.cert,
          allowHTTP1: true,
          ...(tls.clientCa
            ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true }
            : {}),
        },
        listener,
      )
    : createHttpServer(listener);
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  return {
    async listen(address) {
      const colon = address.lastIndexOf(":");
      const host = address.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
      const port = Number(address.slice(colon + 1));
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve();
        });
      });
      return (server.address() as AddressInfo).port;
    },
    stopAccepting() {
      if (server.listening) server.close();
    },
    destroyConnections() {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
  };
}
