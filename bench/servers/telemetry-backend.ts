/**
 * Child process: the telemetry backend of the `telemetry` rows, as a deployment has it (a collector
 * and Prometheus, not in the client's process). It runs OTLP/HTTP sinks that answer every POST
 * /v1/traces with 200 `{}` and count the spans received by name, and scrapers that GET a `/metrics`
 * URL every second, as Prometheus would. Parsing an export and fetching a scrape then never stall
 * the client that times the server.
 *
 * Commands: `sink` starts a sink and answers `{ id, endpoint }`; `sinkStats` answers a sink's
 * counts; `scrape` starts scraping a URL and answers its id; `stopScrape` stops it and answers its
 * counts.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serveIpc } from "../lib/child.js";
import { spanNames } from "../lib/otlp-span-names.js";

/** What a sink received. */
export interface SinkStats {
  spans: [name: string, count: number][];
  exports: number;
  bytes: number;
}

/** What a scraper did. */
export interface ScrapeStats {
  scrapes: number;
  failures: number;
  /** Size of the last successful scrape. */
  bytes: number;
}

interface Sink {
  spans: Map<string, number>;
  exports: number;
  bytes: number;
  server: Server;
}

const sinks: Sink[] = [];
const scrapers: (ScrapeStats & { timer: NodeJS.Timeout })[] = [];

async function startSink(): Promise<{ id: number; endpoint: string }> {
  const sink: Sink = { spans: new Map(), exports: 0, bytes: 0, server: createServer() };
  sink.server.on("request", (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks);
      sink.exports += 1;
      sink.bytes += body.length;
      try {
        for (const name of spanNames(body)) sink.spans.set(name, (sink.spans.get(name) ?? 0) + 1);
      } catch {
        sink.spans.set("(unparsed export)", (sink.spans.get("(unparsed export)") ?? 0) + 1);
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => sink.server.listen(0, "127.0.0.1", resolve));
  const { port } = sink.server.address() as AddressInfo;
  sinks.push(sink);
  return { id: sinks.length - 1, endpoint: `http://127.0.0.1:${port}` };
}

function startScraper(url: string): number {
  const s = { scrapes: 0, failures: 0, bytes: 0 };
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    fetch(url)
      .then(async (res) => {
        const text = await res.text();
        if (res.ok) {
          s.scrapes += 1;
          s.bytes = text.length;
        } else s.failures += 1;
      })
      .catch(() => (s.failures += 1))
      .finally(() => (busy = false));
  }, 1000);
  scrapers.push(Object.assign(s, { timer }));
  return scrapers.length - 1;
}

serveIpc(
  {},
  {
    sink: () => startSink(),
    sinkStats: (id): SinkStats => {
      const sink = sinks[id as number]!;
      return { spans: [...sink.spans], exports: sink.exports, bytes: sink.bytes };
    },
    scrape: (url) => startScraper(url as string),
    stopScrape: (id): ScrapeStats => {
      const { timer, scrapes, failures, bytes } = scrapers[id as number]!;
      clearInterval(timer);
      return { scrapes, failures, bytes };
    },
    close: async () => {
      for (const s of scrapers) clearInterval(s.timer);
      for (const sink of sinks) {
        sink.server.closeAllConnections();
        await new Promise<void>((resolve) => sink.server.close(() => resolve()));
      }
    },
  },
);
