import { Metadata, type StatusObject, status as Status } from "@grpc/grpc-js";
import { type ErrorCode, type ErrorDetails, isParkwayError } from "../common/errors.js";
import type { Any } from "../generated/google/protobuf/any.js";
import {
  BadRequest,
  ErrorInfo,
  PreconditionFailure,
} from "../generated/google/rpc/error_details.js";
import { Status as RpcStatus } from "../generated/google/rpc/status.js";
import { boundDetails, boundMessage } from "./status-bounds.js";

/** The one mapping from domain error codes to gRPC status codes. */
const CODES: Record<ErrorCode, Status> = {
  invalid_argument: Status.INVALID_ARGUMENT,
  not_found: Status.NOT_FOUND,
  already_exists: Status.ALREADY_EXISTS,
  failed_precondition: Status.FAILED_PRECONDITION,
  resource_exhausted: Status.RESOURCE_EXHAUSTED,
  unauthenticated: Status.UNAUTHENTICATED,
  permission_denied: Status.PERMISSION_DENIED,
  unavailable: Status.UNAVAILABLE,
  unimplemented: Status.UNIMPLEMENTED,
  deadline_exceeded: Status.DEADLINE_EXCEEDED,
  aborted: Status.ABORTED,
  internal: Status.INTERNAL,
  data_loss: Status.DATA_LOSS,
};

/** What an unknown error says to the client; the real error only goes to the log. */
export const INTERNAL_MESSAGE = "internal error; the server logged the details";

const DOMAIN = "parkway.dev";

function pack(typeName: string, value: Uint8Array): Any {
  return { typeUrl: `type.googleapis.com/${typeName}`, value: Buffer.from(value) };
}

/** Encodes details as google.rpc Any messages. */
export function encodeDetails(details: ErrorDetails): Any[] {
  const out: Any[] = [];
  if (details.fieldViolations?.length) {
    out.push(
      pack(
        "google.rpc.BadRequest",
        BadRequest.encode({ fieldViolations: details.fieldViolations }).finish(),
      ),
    );
  }
  if (details.preconditionViolations?.length) {
    out.push(
      pack(
        "google.rpc.PreconditionFailure",
        PreconditionFailure.encode({ violations: details.preconditionViolations }).finish(),
      ),
    );
  }
  if (details.reason) {
    out.push(
      pack(
        "google.rpc.ErrorInfo",
        ErrorInfo.encode({
          reason: details.reason,
          domain: DOMAIN,
          metadata: details.metadata ?? {},
        }).finish(),
      ),
    );
  }
  return out;
}

/** Text safe to send: lone UTF-16 surrogates (e.g. a quoted input cut mid-character) replaced. */
const wellFormed = (text: string): string =>
  text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");

/**
 * A status as carried in a message body (InputAck.status) or in trailers: its message and details
 * cut to bounds that fit a client's metadata limit (see `status-bounds.ts`).
 */
export function toRpcStatus(err: unknown): RpcStatus {
  if (isParkwayError(err)) {
    const bounded = boundDetails(err.details);
    const details: ErrorDetails = {
      ...bounded,
      ...(bounded.fieldViolations
        ? {
            fieldViolations: bounded.fieldViolations.map((v) => ({
              field: wellFormed(v.field),
              description: wellFormed(v.description),
            })),
          }
        : {}),
    };
    return {
      code: CODES[err.code],
      message: wellFormed(boundMessage(err.message)),
      details: encodeDetails(details),
    };
  }
  return { code: Status.INTERNAL, message: INTERNAL_MESSAGE, details: [] };
}

/**
 * Maps any thrown value to the status sent to the client: a `ParkwayError` keeps its message and
 * gets its details in `grpc-status-details-bin` (both within bounds, see `toRpcStatus`); anything else becomes INTERNAL with a generic
 * message (the caller logs the real error).
 */
export function toStatusObject(err: unknown): StatusObject {
  const rpc = toRpcStatus(err);
  const metadata = new Metadata();
  if (rpc.details.length > 0) {
    metadata.set("grpc-status-details-bin", Buffer.from(RpcStatus.encode(rpc).finish()));
  }
  return { code: rpc.code, details: rpc.message, metadata };
}

/** True when an error is a bug rather than an expected domain error, so it must be logged. */
export function isUnexpected(err: unknown): boolean {
  return !isParkwayError(err) || err.code === "internal";
}
