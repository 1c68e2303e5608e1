import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import type { Logger } from "../common/logger.js";
import { listenError } from "../common/listen-error.js";

/** The HTTP endpoint Prometheus scrapes. */
export interface MetricsServer {
  /** `http://HOST:PORT/metrics`, with the port actually bound. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (and HEAD) from `registry` in the Prometheus text format on `listen`
 * (`HOST:PORT`, port 0 picks a free one); any other path answers 404, any other method 405. Rejects
 * with `ListenError` naming the address when it cannot be bound.
 */
export async function startMetricsServer(
  listen: string,
  registry: Registry,
  log: Logger,
): Promise<MetricsServer> {
  const colon = listen.lastIndexOf(":");
  const host = listen.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
  const port = Number(listen.slice(colon + 1));
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found: scrape /metrics\n");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end();
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { "content-type": registry.contentType });
        res.end(req.method === "HEAD" ? undefined : text);
      },
      (err: unknown) => {
        log.warn({ err }, "metrics could not be collected");
        res
          .writeHead(500, { "content-type": "text/plain" })
          .end("metrics could not be collected\n");
      },
    );
  });
  // A scraper holds its connection open between scrapes; do not let that delay a shutdown.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    const fail = (err: Error) => reject(listenError(listen, err));
    server.once("error", fail);
    server.listen(port, host, () => {
      server.off("error", fail);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const shown = bound.family === "IPv6" ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${shown}:${bound.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
