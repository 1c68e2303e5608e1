import { cors } from "@connectrpc/connect";
import type { NodeHandler } from "./node-handler.js";

/** Request headers a browser client of Parkway sends besides the protocols' own. */
const APP_HEADERS = ["authorization", "traceparent"];

/** How long a browser may cache a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = "7200";

/**
 * Cross-origin calls from the `origins` given (exact `scheme://host[:port]`, or `*` for any): a
 * preflight (OPTIONS with Access-Control-Request-Method) from one of them is answered with the
 * methods and headers that Connect and gRPC-web use, plus `authorization` and `traceparent`; other
 * requests from them get Access-Control-Allow-Origin and the exposed headers. A request from any
 * other origin gets no CORS headers (its preflight answers 403). With no origins, `handler` alone.
 */
export function withCors(origins: readonly string[], handler: NodeHandler): NodeHandler {
  if (origins.length === 0) return handler;
  const any = origins.includes("*");
  const allowed = new Set(origins);
  return (req, res) => {
    const origin = req.headers.origin;
    const preflight =
      req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
    const ok = typeof origin === "string" && (any || allowed.has(origin));
    if (ok) {
      res.setHeader("access-control-allow-origin", origin);
      res.setHeader("vary", "Origin");
    }
    if (preflight) {
      if (!ok) {
        res.writeHead(403, { "content-type": "text/plain; charset=utf-8" });
        res.end("origin not allowed\n");
        return;
      }
      res.writeHead(204, {
        "access-control-allow-methods": cors.allowedMethods.join(", "),
        "access-control-allow-headers": [...cors.allowedHeaders, ...APP_HEADERS].join(", "),
        "access-control-max-age": PREFLIGHT_MAX_AGE,
      });
      res.end();
      return;
    }
    if (ok) res.setHeader("access-control-expose-headers", cors.exposedHeaders.join(", "));
    handler(req, res);
  };
}
