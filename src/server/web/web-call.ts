import { createContextKey, type HandlerContext } from "@connectrpc/connect";
import { Metadata } from "@grpc/grpc-js";
import { type AdapterEnv, type Context, openCall } from "../call-lifecycle.js";

/** The client's address (`HOST:PORT`), set for each request by the web server. */
export const peerKey = createContextKey<string>("unknown", { description: "peer address" });

/**
 * The request's headers as gRPC metadata, so the web port authenticates and traces a call exactly
 * as the gRPC port does (`authorization`, `traceparent`). Binary (`-bin`) headers and names that
 * gRPC metadata cannot hold are left out.
 */
export function headersToMetadata(headers: Headers): Metadata {
  const metadata = new Metadata();
  headers.forEach((value, key) => {
    if (key.startsWith(":") || key.endsWith("-bin")) return;
    try {
      metadata.add(key, value);
    } catch {
      // A header name that is not a valid metadata key carries nothing Parkway reads.
    }
  });
  return metadata;
}

/**
 * Opens a web call through the same admission, auth and shutdown as the gRPC port; the call is
 * cancelled when the client goes away or its deadline passes.
 */
export function openWebCall(env: AdapterEnv, method: string, hctx: HandlerContext): Context {
  const ctx = openCall(
    env,
    method,
    headersToMetadata(hctx.requestHeader),
    hctx.values.get(peerKey),
  );
  const cancel = () => ctx.cancel(new Error("cancelled by client"));
  if (hctx.signal.aborted) cancel();
  else hctx.signal.addEventListener("abort", cancel, { once: true });
  return ctx;
}
