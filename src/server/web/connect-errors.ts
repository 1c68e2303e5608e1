import { Code, ConnectError } from "@connectrpc/connect";
import { toRpcStatus } from "../errors.js";

const TYPE_URL_PREFIX = "type.googleapis.com/";

/**
 * The one error mapping, for the web port: a `ParkwayError` keeps its code, its message and its
 * google.rpc details (BadRequest field violations, PreconditionFailure, ErrorInfo); anything else
 * becomes INTERNAL with the generic message (the caller logs the real error). gRPC status codes
 * and Connect codes have the same numbers.
 */
export function toConnectError(err: unknown): ConnectError {
  const status = toRpcStatus(err);
  const error = new ConnectError(status.message, status.code);
  for (const detail of status.details) {
    error.details.push({
      type: detail.typeUrl.startsWith(TYPE_URL_PREFIX)
        ? detail.typeUrl.slice(TYPE_URL_PREFIX.length)
        : detail.typeUrl,
      value: detail.value,
    });
  }
  return error;
}

/** What a stream the server's shutdown ended answers, as on the gRPC port. */
export function shuttingDownError(): ConnectError {
  return new ConnectError("server shutting down", Code.Unavailable);
}
